import type { ApiRecord } from '../declarations';
import { attributeKey, hasUnit, isMultilang, languageSuffix, type AttributeDef, type LoadedValue } from './attribute-def';

/** One attribute of one record: the main value row and the rows of the other languages. */
export interface RecordAttribute {
  attribute: AttributeDef;
  main?: LoadedValue;
  byLanguage: Map<string, LoadedValue>;
}

/** How values are shown: the instance languages (main first) and the language asked for. */
export interface ValueView {
  languages: readonly string[];
  /**
   * The language asked for (main included): variants are then left out, and a non-main
   * language's values replace the main ones.
   */
  language?: string;
  /** `Entity:id` → name of linked records. */
  linkNames: ReadonlyMap<string, string | null>;
  /** Whether labels read in `language`: the caller may read that variant of `Attribute.name`. */
  labelInLanguage: boolean;
}

/** Groups loaded rows by record, then attribute (in load order). */
export function groupValues(values: readonly LoadedValue[]): Map<string, Map<string, RecordAttribute>> {
  const byRecord = new Map<string, Map<string, RecordAttribute>>();
  for (const v of values) {
    let attributes = byRecord.get(v.recordId);
    if (!attributes) byRecord.set(v.recordId, (attributes = new Map()));
    let entry = attributes.get(v.attributeId);
    if (!entry) attributes.set(v.attributeId, (entry = { attribute: v.attribute, byLanguage: new Map() }));
    if (v.language === '') entry.main = v;
    else entry.byLanguage.set(v.language, v);
  }
  return byRecord;
}

const isEmpty = (value: unknown) => value === null || value === undefined || value === '';

/** The value shown for an attribute: in the asked language when it has one (else the main value). */
function shownValue(entry: RecordAttribute, view: ValueView): unknown {
  const main = entry.main?.value ?? null;
  if (!view.language || view.language === view.languages[0] || !isMultilang(entry.attribute)) return main;
  const translated = entry.byLanguage.get(view.language)?.value;
  return isEmpty(translated) ? main : translated;
}

/** Language variants (`DeDE` → value) of a multilingual attribute, unless a language was asked for. */
function variants(entry: RecordAttribute, view: ValueView): [string, unknown][] {
  if (view.language || !isMultilang(entry.attribute)) return [];
  return view.languages.slice(1).map((l) => [languageSuffix(l), entry.byLanguage.get(l)?.value ?? null]);
}

const linkName = (view: ValueView, entity: string | null, id: string) => view.linkNames.get(`${entity}:${id}`) ?? null;

/**
 * The linked records of a multiple link attribute that are live (those `linkNames` found): one in
 * the bin is not shown, as in a multiple link field's list, and is listed again once restored.
 */
function linkedIds(entry: RecordAttribute, view: ValueView): string[] {
  const value = entry.main?.value;
  const { linkEntity } = entry.attribute;
  return Array.isArray(value) ? (value as string[]).filter((id) => view.linkNames.has(`${linkEntity}:${id}`)) : [];
}

/** Label of an attribute in the asked language where the caller may read it (its name, else code, else id). */
function label(a: AttributeDef, view: ValueView): string {
  const translated = view.language && view.labelInLanguage ? a.names[view.language] : undefined;
  return translated || a.name || a.code || a.id;
}

/** Adds the virtual fields of one attribute to a record. */
function addVirtualFields(record: Record<string, unknown>, entry: RecordAttribute, view: ValueView): void {
  const a = entry.attribute;
  const key = attributeKey(a);
  if (a.type === 'link') {
    const id = (entry.main?.value as string | null) ?? null;
    record[`${key}Id`] = id;
    record[`${key}Name`] = id === null ? null : linkName(view, a.linkEntity, id);
    return;
  }
  if (a.type === 'linkMultiple') {
    const ids = linkedIds(entry, view);
    record[`${key}Ids`] = ids;
    record[`${key}Names`] = Object.fromEntries(ids.map((id) => [id, linkName(view, a.linkEntity, id)]));
    return;
  }
  record[key] = shownValue(entry, view);
  for (const [suffix, value] of variants(entry, view)) record[`${key}${suffix}`] = value;
  if (hasUnit(a)) {
    record[`${key}UnitId`] = entry.main?.unitId ?? null;
    record[`${key}UnitName`] = entry.main?.unitName ?? null;
  }
}

/** How the flattened format shows attributes: in the request's view, with full `attributesDefs` (single reads) or minimal ones (lists). */
interface FlatFormat {
  view: ValueView;
  full: boolean;
}

/** `attributesDefs` entries of one attribute: minimal in lists, full in single reads. */
function addDefs(defs: Record<string, unknown>, a: AttributeDef, { view, full }: FlatFormat): void {
  const key = attributeKey(a);
  const base = { attributeId: a.id, type: a.type };
  const more = (extra: Record<string, unknown> = {}) =>
    full
      ? {
          ...base,
          label: label(a, view),
          ...(a.measureId && hasUnit(a) && { measureId: a.measureId }),
          readOnly: a.isReadOnly,
          fullWidth: a.type === 'text',
          required: a.isRequired,
          ...(a.linkEntity && { entity: a.linkEntity }),
          ...(a.options && { options: a.options }),
          ...extra,
        }
      : { ...base, ...('unitIdField' in extra && { type: 'link' }) };
  defs[key] = more();
  if (hasUnit(a)) defs[`${key}UnitId`] = more({ type: 'link', entity: 'Unit', unitIdField: true, mainField: key, label: `${label(a, view)} (unit)` });
  if (isMultilang(a) && !view.language) {
    for (const l of view.languages.slice(1)) defs[`${key}${languageSuffix(l)}`] = more({ language: l, mainField: key });
  }
}

/**
 * The flattened format: each attribute's virtual fields on the record, and `attributesDefs`
 * keyed by field name.
 */
export function flattenInto(record: ApiRecord, attributes: Iterable<RecordAttribute>, format: FlatFormat): void {
  const defs: Record<string, unknown> = {};
  for (const entry of attributes) {
    addVirtualFields(record, entry, format.view);
    addDefs(defs, entry.attribute, format);
  }
  record.attributesDefs = defs;
}

/** One attribute's value in the nested and simple forms: `{attributeId, attributeValueId, value, …}`. */
export function valueItem(entry: RecordAttribute, view: ValueView): Record<string, unknown> {
  const a = entry.attribute;
  const item: Record<string, unknown> = { attributeId: a.id, attributeValueId: entry.main?.id ?? null };
  if (a.type === 'linkMultiple') {
    const ids = linkedIds(entry, view);
    item.value = ids;
    item.valueNames = Object.fromEntries(ids.map((id) => [id, linkName(view, a.linkEntity, id)]));
  } else {
    item.value = shownValue(entry, view);
    if (a.type === 'link') item.valueName = item.value === null ? null : linkName(view, a.linkEntity, item.value as string);
  }
  for (const [suffix, value] of variants(entry, view)) item[`value${suffix}`] = value;
  if (hasUnit(a)) {
    item.valueUnitId = entry.main?.unitId ?? null;
    item.valueUnitName = entry.main?.unitName ?? null;
  }
  return item;
}

/** The simple endpoint form: the value with the attribute's flags. */
export function simpleItem(entry: RecordAttribute, view: ValueView): Record<string, unknown> {
  const a = entry.attribute;
  const { attributeId, attributeValueId, ...value } = valueItem(entry, view);
  return {
    attributeId,
    attributeValueId,
    code: a.code,
    name: label(a, view),
    type: a.type,
    ...value,
    required: a.isRequired,
    visible: true,
    readOnly: a.isReadOnly,
    protected: a.isProtected,
  };
}

/** `Entity:id` pairs of the linked records the values name, by target entity type. */
export function linkTargets(values: readonly LoadedValue[]): Map<string, Set<string>> {
  const wanted = new Map<string, Set<string>>();
  for (const v of values) {
    const { type, linkEntity } = v.attribute;
    if ((type !== 'link' && type !== 'linkMultiple') || !linkEntity || v.value === null) continue;
    let ids = wanted.get(linkEntity);
    if (!ids) wanted.set(linkEntity, (ids = new Set()));
    for (const id of Array.isArray(v.value) ? (v.value as string[]) : [v.value as string]) ids.add(id);
  }
  return wanted;
}
