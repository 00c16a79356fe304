import type { Knex } from 'knex';
import { attributeKey, type AttributeDef } from '../attributes/attribute-def';
import type { AttributeCondition, AttributeListParams, AttributeListQuery } from '../attributes/record-attributes';
import type { EntityModel, FieldModel, ValueType } from '../definition/model';
import type { AttributeStore } from './attribute-store';
import type { Dialect } from './dialects/dialect';
import { STORED_TYPE, VALUE_COLUMN } from './attribute-table';
import { invalidQuery } from './where-values';

/** Types a list may sort by. */
const SORTABLE = new Set(['varchar', 'text', 'int', 'float', 'bool', 'date', 'datetime', 'enum']);

/** Operators a multiple link does not take (as for a `linkMultiple` field): it is linked or not. */
const NOT_FOR_LINK_MULTIPLE = new Set(['isNull', 'isNotNull']);
/**
 * The operators a multiple link takes: its values are stored as a list (as a `multiEnum`'s), but
 * the refusal of another operator names the attribute's own type.
 */
const FOR_LINK_MULTIPLE = new Set(['linkedWith', 'notLinkedWith', 'isLinked', 'isNotLinked', 'arrayAnyOf', 'arrayNoneOf']);

const isTrue = (v: unknown) => v === true || v === 'true' || v === '1';

/** Attribute names of `isAttribute` conditions, also inside `and`, `or` and `not`. */
export function whereAttributeNames(items: readonly unknown[] | undefined, out = new Set<string>()): Set<string> {
  for (const item of items ?? []) {
    if (typeof item !== 'object' || item === null) continue;
    const w = item as { type?: unknown; attribute?: unknown; value?: unknown; isAttribute?: unknown };
    if (w.type === 'and' || w.type === 'or' || w.type === 'not') {
      const children = Array.isArray(w.value) ? w.value : typeof w.value === 'object' && w.value !== null ? [w.value] : [];
      whereAttributeNames(children, out);
    } else if (isTrue(w.isAttribute) && typeof w.attribute === 'string' && w.attribute !== '') {
      out.add(w.attribute);
    }
  }
  return out;
}

/** The value column of an attribute, as a field the where compiler understands. */
function valueField(a: AttributeDef): FieldModel {
  const key = attributeKey(a);
  const column = VALUE_COLUMN[a.type];
  if (a.type === 'link') {
    const target = a.linkEntity ?? '';
    return { name: key, key, type: 'link', column, def: { type: 'link', entity: target }, system: false, target, linkKind: 'belongsTo' };
  }
  // Lists are JSON arrays (multiple links too: their operators become array operators).
  const type = (STORED_TYPE[a.type] === 'text' ? a.type : STORED_TYPE[a.type]) as ValueType;
  return { name: key, key, type, column, def: { type, options: a.options ?? undefined }, system: false };
}

const matches = (a: AttributeDef, name: string) => a.id === name || a.code === name;

/**
 * The most attributes one list (or mass update) may filter and sort by: each is a join of the
 * value table, and SQLite joins at most 64 tables in a statement (past it the query failed, 500).
 * The same on every database.
 */
export const MAX_JOINED_ATTRIBUTES = 50;

/** Where a list query reads attributes from: the store, through the connection of the request. */
interface AttributeSource {
  store: AttributeStore;
  db: Knex;
  dialect: Dialect;
}

/** The value of an attribute to sort by: text in code point order (`Dialect.codePointOrder`), as fields. */
function sortValue({ db, dialect }: AttributeSource, attribute: AttributeDef, alias: string): Knex.Raw {
  const column = `${alias}.${VALUE_COLUMN[attribute.type]}`;
  return STORED_TYPE[attribute.type] === 'text' ? db.raw(dialect.codePointOrder('??'), [column]) : db.raw('??', [column]);
}

/**
 * The attributes a list names, resolved with one query (none when it names none): unknown ones
 * are 400. Each gets one join alias (`av_0`, `av_1`…), never a client string.
 */
export async function buildListQuery(source: AttributeSource, model: EntityModel, params: AttributeListParams): Promise<AttributeListQuery | undefined> {
  const { store, db } = source;
  const inWhere = whereAttributeNames(params.where);
  const listed = params.attributes ?? [];
  const sortName = params.sortBy && !model.byKey.has(params.sortBy) && !model.field.has(params.sortBy) ? params.sortBy : undefined;
  const names = [...new Set([...inWhere, ...listed])];
  if (names.length === 0) return params.allAttributes ? { shown: 'all', join: () => undefined, condition: () => undefined } : undefined;
  const found = await store.attributes(db, model.name, names);
  const find = (name: string) => found.find((a) => matches(a, name));
  const unknown = listed.find((n) => !find(n));
  if (unknown) throw invalidQuery(`Unknown attribute '${unknown}' of ${model.name} in attributes`, { attribute: unknown });
  const shownList = listed.map((n) => find(n) as AttributeDef).filter((a, i, all) => all.indexOf(a) === i);
  const sorted = sortName ? shownList.find((a) => matches(a, sortName)) : undefined;
  if (sorted && !SORTABLE.has(sorted.type)) throw invalidQuery(`Cannot sort ${model.name} by attribute '${sortName}' (${sorted.type})`, { field: sortName });
  const joined = [...new Set([...[...inWhere].map(find).filter((a): a is AttributeDef => !!a), ...(sorted ? [sorted] : [])])];
  if (joined.length > MAX_JOINED_ATTRIBUTES) {
    throw invalidQuery(`where and sortBy must not name more than ${MAX_JOINED_ATTRIBUTES} attributes of ${model.name} (${joined.length} named)`, { maxAttributes: MAX_JOINED_ATTRIBUTES });
  }
  const alias = (a: AttributeDef) => `av_${joined.indexOf(a)}`;
  const condition = (name: unknown, operator: string): AttributeCondition | undefined => {
    const a = typeof name === 'string' ? find(name) : undefined;
    if (!a || !joined.includes(a)) return undefined;
    if (a.type !== 'linkMultiple') return { field: valueField(a), table: alias(a), operator };
    if (NOT_FOR_LINK_MULTIPLE.has(operator)) throw invalidQuery(`Operator '${operator}' does not apply to attribute '${name}' (linkMultiple): use isLinked or isNotLinked`, { attribute: name });
    if (!FOR_LINK_MULTIPLE.has(operator)) throw invalidQuery(`Operator '${operator}' does not apply to attribute '${name}' (linkMultiple)`, { attribute: name });
    return { field: valueField(a), table: alias(a), operator, linkTarget: a.linkEntity ?? '' };
  };
  return {
    shown: params.allAttributes ? 'all' : shownList.length ? shownList : undefined,
    join: (qb) => joined.forEach((a) => store.joinValue(qb, model, { alias: alias(a), attributeId: a.id })),
    condition,
    sort: sorted ? sortValue(source, sorted, alias(sorted)) : undefined,
  };
}
