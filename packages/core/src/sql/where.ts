import type { Knex } from 'knex';
import type { FieldModel } from '../definition/model';
import { col, rawCol, type Apply, type WhereContext, type WhereItem } from './where-types';
import { countLinkConditions, jsonLinkOp, LINK_OPERATORS, linkOp, type LinkOperator } from './where-links';
import { addDays, formatDateTime, isValidTimeZone, localDate, startOfLocalDay } from '../time';
import { assertWhereSize } from '../util/where-limits';
import { MAX_DAYS, WHERE_GROUPS, asList, asNonNegativeInt, coerceScalar, escapeLike, groupItems, invalidQuery, isFilterText, isWhereGroup, likePattern } from './where-values';

export type { WhereContext, WhereItem } from './where-types';

type Builder = Knex.QueryBuilder;

const COMPARE: Record<string, string> = {
  equals: '=',
  notEquals: '<>',
  greaterThan: '>',
  lessThan: '<',
  greaterThanOrEquals: '>=',
  lessThanOrEquals: '<=',
};
const STRING_TYPES = new Set(['varchar', 'text', 'enum', 'link']);
const ORDERED_TYPES = new Set(['varchar', 'text', 'enum', 'int', 'float', 'date', 'datetime', 'link']);
const SCALAR_TYPES = new Set([...ORDERED_TYPES, 'bool']);
const DATE_TYPES = new Set(['date', 'datetime']);


function requireTypes(field: FieldModel, item: WhereItem, types: Set<string>): void {
  if (!types.has(field.type) || (field.type === 'link' && field.linkKind !== 'belongsTo')) {
    throw invalidQuery(`Operator '${item.type}' does not apply to field '${field.name}' (${field.type})`);
  }
}

const scalar = (field: FieldModel, item: WhereItem, ctx: WhereContext) =>
  ctx.dialect.toDb(field.type, coerceScalar(field, item.value));

/**
 * `column op value`; text compares in code point order on both databases, as it sorts
 * (`Dialect.codePointOrder`, `sortColumn`): `id` as its index orders it.
 */
function ordered(qb: Builder, { field, ctx }: { field: FieldModel; ctx: WhereContext }, [op, value]: [string, unknown]): void {
  if (STRING_TYPES.has(field.type) && field.name !== 'id') qb.whereRaw(`${ctx.dialect.codePointOrder('??')} ${op} ?`, [col(ctx, field), value as never]);
  else qb.where(col(ctx, field), op, value as never);
}

function compare(op: string): Apply {
  return ({ qb, field, item, ctx }) => {
    requireTypes(field, item, op === '=' || op === '<>' ? SCALAR_TYPES : ORDERED_TYPES);
    if (item.value === undefined || item.value === null) throw invalidQuery(`Operator '${item.type}' needs a value`);
    const value = scalar(field, item, ctx);
    if (op === '<>') qb.where((w) => w.where(col(ctx, field), '<>', value as never).orWhereNull(col(ctx, field)));
    else if (op === '=') qb.where(col(ctx, field), op, value as never);
    else ordered(qb, { field, ctx }, [op, value]);
  };
}

function like(pattern: (v: string) => string, negate: boolean): Apply {
  return ({ qb, field, item, ctx }) => {
    requireTypes(field, item, STRING_TYPES);
    if (!isFilterText(item.value)) {
      throw invalidQuery(`Operator '${item.type}' needs a text value (at most 10000 characters, no NUL)`, { field: field.name });
    }
    const sql = ctx.dialect.likeSql(rawCol(ctx, field), negate);
    const bound = pattern(item.value);
    if (negate) qb.where((w) => w.whereRaw(sql, [bound]).orWhereNull(col(ctx, field)));
    else qb.whereRaw(sql, [bound]);
  };
}

function inList(negate: boolean): Apply {
  return ({ qb, field, item, ctx }) => {
    requireTypes(field, item, SCALAR_TYPES);
    const values = asList(item.value).map((v) => ctx.dialect.toDb(field.type, coerceScalar(field, v)));
    if (!negate) {
      if (values.length === 0) qb.whereRaw('1 = 0');
      else qb.whereIn(col(ctx, field), values as never[]);
    } else if (values.length > 0) {
      qb.where((w) => w.whereNotIn(col(ctx, field), values as never[]).orWhereNull(col(ctx, field)));
    }
  };
}

function dateRange(item: WhereItem, field: FieldModel): [string | null, string | null, boolean] {
  const tz: unknown = item.timeZone ?? 'UTC';
  if (typeof tz !== 'string' || !isValidTimeZone(tz)) throw invalidQuery(`Unknown time zone '${String(tz)}'`, { timeZone: tz });
  const today = localDate(tz);
  const isDate = field.type === 'date';
  const dayStart = (d: string) => (isDate ? d : startOfLocalDay(tz, d));
  // Stored times are whole seconds: the current second has begun, so it is past, not future.
  const at = new Date();
  const now = isDate ? today : formatDateTime(at);
  const nextSecond = formatDateTime(new Date(at.getTime() + 1000));
  const days = () => asNonNegativeInt(item.value, `Operator '${item.type}' value`, MAX_DAYS);
  // [lower bound inclusive, upper bound, upper bound inclusive]
  switch (item.type) {
    case 'today':
      return isDate ? [today, today, true] : [dayStart(today), dayStart(addDays(today, 1)), false];
    case 'past':
      return [null, now, !isDate];
    case 'future':
      return isDate ? [addDays(today, 1), null, true] : [nextSecond, null, true];
    case 'lastXDays':
      return [dayStart(addDays(today, -days())), now, true];
    default: // nextXDays
      return isDate ? [today, addDays(today, days()), true] : [now, dayStart(addDays(today, days() + 1)), false];
  }
}

const dateOp: Apply = ({ qb, field, item, ctx }) => {
  requireTypes(field, item, DATE_TYPES);
  const [from, to, toInclusive] = dateRange(item, field);
  if (from !== null) qb.where(col(ctx, field), '>=', from);
  if (to !== null) qb.where(col(ctx, field), toInclusive ? '<=' : '<', to);
};

function arrayOp(negate: boolean): Apply {
  return ({ qb, field, item, ctx }) => {
    if (field.type !== 'multiEnum') throw invalidQuery(`Operator '${item.type}' applies to multiEnum fields only`);
    const values = asList(item.value).map((v) => coerceScalar({ ...field, type: 'varchar' }, v));
    if (values.length === 0) {
      if (!negate) qb.whereRaw('1 = 0');
      return;
    }
    const sql = ctx.dialect.jsonArrayAnyOf(rawCol(ctx, field), values.length);
    if (negate) qb.where((w) => w.whereNull(col(ctx, field)).orWhereRaw(`not (${sql})`, values as string[]));
    else qb.whereRaw(sql, values as string[]);
  };
}

const OPERATORS: Readonly<Record<string, Apply>> = {
  ...Object.fromEntries(Object.entries(COMPARE).map(([name, op]) => [name, compare(op)])),
  between({ qb, field, item, ctx }) {
    requireTypes(field, item, ORDERED_TYPES);
    const pair = asList(item.value);
    if (pair.length !== 2) throw invalidQuery(`Operator 'between' needs a value of two items`);
    const [a, b] = pair.map((v) => ctx.dialect.toDb(field.type, coerceScalar(field, v)));
    ordered(qb, { field, ctx }, ['>=', a]);
    ordered(qb, { field, ctx }, ['<=', b]);
  },
  in: inList(false),
  notIn: inList(true),
  isNull: ({ qb, field, ctx }) => void qb.whereNull(col(ctx, field)),
  isNotNull: ({ qb, field, ctx }) => void qb.whereNotNull(col(ctx, field)),
  isTrue({ qb, field, item, ctx }) {
    requireTypes(field, item, new Set(['bool']));
    qb.where(col(ctx, field), ctx.dialect.toDb('bool', true) as never);
  },
  isFalse({ qb, field, item, ctx }) {
    requireTypes(field, item, new Set(['bool']));
    qb.where(col(ctx, field), ctx.dialect.toDb('bool', false) as never);
  },
  like: like(likePattern, false),
  notLike: like(likePattern, true),
  contains: like((v) => `%${escapeLike(v)}%`, false),
  notContains: like((v) => `%${escapeLike(v)}%`, true),
  startsWith: like((v) => `${escapeLike(v)}%`, false),
  endsWith: like((v) => `%${escapeLike(v)}`, false),
  today: dateOp,
  past: dateOp,
  future: dateOp,
  lastXDays: dateOp,
  nextXDays: dateOp,
  linkedWith: linkOp('linkedWith'),
  notLinkedWith: linkOp('notLinkedWith'),
  isLinked: linkOp('isLinked'),
  isNotLinked: linkOp('isNotLinked'),
  arrayAnyOf: arrayOp(false),
  arrayNoneOf: arrayOp(true),
};

/** Every operator name the compiler knows, for docs and OpenAPI. */
export const WHERE_OPERATORS = [...WHERE_GROUPS, ...Object.keys(OPERATORS)];

/** Resolves a condition's attribute through the definition only; unknown names are 400. */
export function resolveField(ctx: WhereContext, attribute: unknown, operator: string): FieldModel {
  if (typeof attribute !== 'string' || attribute === '') throw invalidQuery(`Operator '${operator}' needs an attribute`);
  const { model } = ctx;
  const field = model.byKey.get(attribute) ?? model.field.get(attribute);
  if (!field || field.def.writeOnly) {
    throw invalidQuery(`Unknown field '${attribute}' for ${model.name}`, { field: attribute });
  }
  // A field the caller may not read is refused before anything is said of it (its type).
  ctx.onField?.(field);
  if (field.def.computed) throw invalidQuery(`Field '${field.name}' is computed for each answer; it cannot be filtered`, { field: attribute });
  if (!field.column && !LINK_OPERATORS.has(operator)) {
    throw invalidQuery(`Operator '${operator}' does not apply to field '${field.name}' (${field.type})`, { field: attribute });
  }
  return field;
}

function applyItem(qb: Builder, item: unknown, ctx: WhereContext): void {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw invalidQuery('A where item must be an object');
  const w = item as WhereItem;
  if (typeof w.type !== 'string') throw invalidQuery('A where item needs a type');
  if (isWhereGroup(w)) {
    const children = groupItems(w.value);
    if (children.length === 0) throw invalidQuery(`Operator '${w.type}' needs a list of items`);
    if (w.type === 'or') {
      qb.where((outer) => {
        for (const child of children) outer.orWhere((inner) => applyItem(inner, child, ctx));
      });
    } else if (w.type === 'and') {
      qb.where((inner) => children.forEach((child) => applyItem(inner, child, ctx)));
    } else {
      // `not (condition)` is NULL, and drops the row, where the condition meets a NULL field;
      // `not exists (select 1 where condition)` keeps it: the negation of a condition not met.
      qb.whereNotExists((sub) => {
        sub.select(sub.client.raw('1')).where((inner) => children.forEach((child) => applyItem(inner, child, ctx)));
      });
    }
    return;
  }
  // Own properties only: `toString`, `constructor` or `__proto__` are no operators.
  const op = Object.hasOwn(OPERATORS, w.type) ? OPERATORS[w.type] : undefined;
  if (!op) throw invalidQuery(`Unknown operator '${w.type}'`, { operator: w.type });
  if (isAttributeItem(w)) {
    applyAttributeItem(qb, w, ctx);
    return;
  }
  op({ qb, field: resolveField(ctx, w.attribute, w.type), item: w, ctx });
}

/** `isAttribute` as JSON or the bracket form gives it: true, false, "true", "false", "1", "0" (400 otherwise). */
function isAttributeItem(w: WhereItem): boolean {
  const flag = w.isAttribute as unknown;
  if (flag === true || flag === 'true' || flag === '1') return true;
  if (flag === undefined || flag === null || flag === false || flag === 'false' || flag === '0') return false;
  throw invalidQuery('isAttribute must be true or false', { isAttribute: flag });
}

/** A condition on an attribute: the operator applied to its value, joined under the alias the server chose. */
function applyAttributeItem(qb: Builder, w: WhereItem, ctx: WhereContext): void {
  if (typeof w.attribute !== 'string' || w.attribute === '') throw invalidQuery(`Operator '${w.type}' needs an attribute`);
  const target = ctx.attribute?.(w.attribute, w.type);
  if (!target) throw invalidQuery(`${ctx.model.name} has no attribute '${w.attribute}'`, { attribute: w.attribute });
  const linkOp = target.linkTarget !== undefined && LINK_OPERATORS.has(target.operator) ? jsonLinkOp(target.operator as LinkOperator, target.linkTarget) : undefined;
  const op = linkOp ?? (Object.hasOwn(OPERATORS, target.operator) ? OPERATORS[target.operator] : undefined);
  if (!op) throw invalidQuery(`Unknown operator '${w.type}'`, { operator: w.type });
  op({ qb, field: target.field, item: w, ctx: { ...ctx, model: { ...ctx.model, table: target.table } } });
}

/** Applies a list of where items (ANDed) to a query of the context's entity. */
/**
 * Link conditions a `where` may hold before their subqueries are tested as filters rather than
 * joined (`linksAsFilters`): a few keep the plans that start from the link's rows; many would take
 * PostgreSQL seconds to plan.
 */
const JOINED_LINK_CONDITIONS = 8;

export function applyWhere(qb: Builder, items: readonly unknown[], ctx: WhereContext): void {
  assertWhereSize(items);
  const compiled = countLinkConditions(items) > JOINED_LINK_CONDITIONS ? { ...ctx, linksAsFilters: true } : ctx;
  for (const item of items) applyItem(qb, item, compiled);
}
