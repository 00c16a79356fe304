import type { AttributeType } from './entities';

/** An attribute as reads and writes of values need it (a row of `Attribute`, decoded). */
export interface AttributeDef {
  id: string;
  code: string | null;
  name: string | null;
  /** The name per non-main language code, when `name` has language variants. */
  names: Record<string, string | null>;
  entityType: string;
  type: AttributeType;
  measureId: string | null;
  isMultilang: boolean;
  isRequired: boolean;
  isReadOnly: boolean;
  isProtected: boolean;
  options: string[] | null;
  linkEntity: string | null;
  min: number | null;
  max: number | null;
}

/** A stored value row: one per record, attribute and language (`''` is the main value). */
export interface StoredValue {
  id: string;
  recordId: string;
  attributeId: string;
  language: string;
  value: unknown;
  unitId: string | null;
}

/** A stored value with its attribute and the name of its unit. */
export interface LoadedValue extends StoredValue {
  attribute: AttributeDef;
  unitName: string | null;
}

/** The key of an attribute's virtual fields: its code, or its id when it has none. */
export const attributeKey = (a: Pick<AttributeDef, 'id' | 'code'>): string => a.code ?? a.id;

/** The key a value of an attribute reads as in a flattened record (`maker` → `makerId`; `nameDeDE`). */
export function valueKey(a: Pick<AttributeDef, 'id' | 'code' | 'type'>, language = ''): string {
  const key = attributeKey(a);
  if (a.type === 'link') return `${key}Id`;
  if (a.type === 'linkMultiple') return `${key}Ids`;
  return language ? `${key}${languageSuffix(language)}` : key;
}

/**
 * What removing an attribute from a record changed (into `diff`): its value (which was there, even
 * empty, as putting it on shows it), each language variant, and the unit; `rows` are the record's.
 */
export function removedDiff(diff: Record<string, { was: unknown; became: unknown }>, a: AttributeDef, rows: readonly StoredValue[]): void {
  const own = rows.filter((r) => r.attributeId === a.id);
  const main = own.find((r) => r.language === '');
  diff[valueKey(a)] = { was: main?.value ?? null, became: null };
  for (const row of own) if (row.language !== '' && row.value !== null) diff[valueKey(a, row.language)] = { was: row.value, became: null };
  if (main?.unitId) diff[`${attributeKey(a)}UnitId`] = { was: main.unitId, became: null };
}

/** int and float attributes with a measure carry a unit. */
export const hasUnit = (a: Pick<AttributeDef, 'type' | 'measureId'>): boolean => (a.type === 'int' || a.type === 'float') && !!a.measureId;

export const isLinkType = (type: AttributeType): boolean => type === 'link' || type === 'linkMultiple';

/** Types whose values may be multilingual. */
export const MULTILANG_TYPES: ReadonlySet<AttributeType> = new Set(['varchar', 'text']);

export const isMultilang = (a: Pick<AttributeDef, 'type' | 'isMultilang'>): boolean => a.isMultilang && MULTILANG_TYPES.has(a.type);

/**
 * The suffix of a language variant: the code without its underscore, first letter upper case
 * (`de_DE` → `DeDE`, so `name` → `nameDeDE`).
 */
export const languageSuffix = (code: string): string => {
  const plain = code.replace(/_/g, '');
  return plain.charAt(0).toUpperCase() + plain.slice(1);
};

/**
 * The record keys an attribute answers to: its key, and the unit, language or link fields it has
 * (`weight`, `weightUnitId`, `weightUnitName`; `maker`, `makerId`, `makerName`). `languages`: the
 * instance languages, main first.
 */
export function virtualFieldNames(a: Pick<AttributeDef, 'id' | 'code' | 'type' | 'measureId' | 'isMultilang'>, languages: readonly string[]): string[] {
  const key = attributeKey(a);
  if (a.type === 'link') return [key, `${key}Id`, `${key}Name`];
  if (a.type === 'linkMultiple') return [key, `${key}Ids`, `${key}Names`];
  const units = hasUnit(a) ? [`${key}UnitId`, `${key}UnitName`] : [];
  const variants = isMultilang(a) ? languages.slice(1).map((l) => `${key}${languageSuffix(l)}`) : [];
  return [key, ...units, ...variants];
}
