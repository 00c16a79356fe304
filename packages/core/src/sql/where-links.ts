import type { EntityModel, MultipleLinkField } from '../definition/model';
import { asList, coerceScalar, invalidQuery } from './where-values';
import { rawCol, type Apply, type WhereContext } from './where-types';

/** The link operators of `where`: on link fields (`linkOp`) and on multiple-link attributes (`jsonLinkOp`). */

/** SQL selecting the ids of this entity's records linked (to any of `ids`, when given). */
function linkSubquery(ctx: WhereContext, field: MultipleLinkField, ids: unknown[] | null): string {
  const target = ctx.schema.entity(field.target) as EntityModel;
  if (field.linkKind === 'hasMany') {
    return `select "${field.foreignColumn}" from "${target.table}" where deleted = ${ctx.dialect.bool(false)}${
      ids ? ` and id in (${ids.map(() => '?').join(', ')})` : ''
    } and "${field.foreignColumn}" is not null`;
  }
  const { join } = field;
  return `select j."${join.ownColumn}" from "${join.table}" j join "${target.table}" t on t.id = j."${join.targetColumn}" where t.deleted = ${ctx.dialect.bool(false)}${ids ? ` and j."${join.targetColumn}" in (${ids.map(() => '?').join(', ')})` : ''}`;
}

export type LinkOperator = 'linkedWith' | 'notLinkedWith' | 'isLinked' | 'isNotLinked';

export const LINK_OPERATORS: ReadonlySet<string> = new Set<LinkOperator>(['linkedWith', 'notLinkedWith', 'isLinked', 'isNotLinked']);

/**
 * What a link operator asks: the ids it names (none for isLinked / isNotLinked) and whether it
 * negates. Undefined when an empty list of ids decides alone (matches nothing, or everything
 * negated): the condition is applied to `qb` then.
 */
function linkTerms(kind: LinkOperator, { qb, field, item }: Pick<Parameters<Apply>[0], 'qb' | 'field' | 'item'>): { ids?: unknown[]; negate: boolean } | undefined {
  const ids = kind === 'linkedWith' || kind === 'notLinkedWith' ? asList(item.value).map((v) => coerceScalar({ ...field, type: 'varchar' }, v)) : undefined;
  const negate = kind === 'notLinkedWith' || kind === 'isNotLinked';
  if (ids?.length !== 0) return { ids, negate };
  if (!negate) qb.whereRaw('1 = 0');
  return undefined;
}

/**
 * `column in (subquery)` (or `not in`) as SQL: PostgreSQL turns each such condition into a join of
 * the query, and plans many of them in time that grows steeply (80 in one `where`: over a second;
 * 160: twelve). With `linksAsFilters` the test is wrapped (`is true`: the same rows, as a NULL
 * keeps no row either way), which keeps it out of the joins: each subquery then runs once, as a
 * hashed set its rows are looked up in.
 */
function inSubquery(ctx: WhereContext, { column, negate, sub }: { column: string; negate: boolean; sub: string }): string {
  const test = `${column} ${negate ? 'not in' : 'in'} (${sub})`;
  return ctx.linksAsFilters ? `(${test}) is true` : test;
}

/** How many conditions of a `where` (its groups' included) use a link operator. */
export function countLinkConditions(items: readonly unknown[]): number {
  let count = 0;
  const visit = (item: unknown) => {
    if (typeof item !== 'object' || item === null) return;
    const { type, value } = item as { type?: unknown; value?: unknown };
    if (typeof type !== 'string') return;
    if (LINK_OPERATORS.has(type)) count += 1;
    else if (type === 'and' || type === 'or' || type === 'not') [value].flat().forEach(visit);
  };
  items.forEach(visit);
  return count;
}

export function linkOp(kind: LinkOperator): Apply {
  return ({ qb, field, item, ctx }) => {
    if (field.type !== 'link' && field.type !== 'linkMultiple') {
      throw invalidQuery(`Operator '${item.type}' does not apply to field '${field.name}' (${field.type})`);
    }
    const terms = linkTerms(kind, { qb, field, item });
    if (!terms) return;
    const { ids, negate } = terms;
    if (field.linkKind === 'belongsTo') {
      // Linked means: pointing at a live record (a soft-deleted target is no link, as for the
      // other link kinds).
      const c = rawCol(ctx, field);
      const target = ctx.schema.entity(field.target) as EntityModel;
      const sub = `select t.id from "${target.table}" t where t.deleted = ${ctx.dialect.bool(false)}${ids ? ` and t.id in (${ids.map(() => '?').join(', ')})` : ''}`;
      const test = inSubquery(ctx, { column: c, negate, sub });
      qb.whereRaw(negate ? `(${c} is null or ${test})` : test, (ids ?? []) as string[]);
      return;
    }
    const sub = linkSubquery(ctx, field, ids ?? null);
    qb.whereRaw(inSubquery(ctx, { column: `"${ctx.model.table}".id`, negate, sub }), (ids ?? []) as string[]);
  };
}

/**
 * A link operator on a multiple-link attribute (a JSON array of ids in its value column): only
 * live records of `target` count as linked, as for link fields.
 */
export function jsonLinkOp(kind: LinkOperator, target: string): Apply {
  return ({ qb, field, item, ctx }) => {
    const terms = linkTerms(kind, { qb, field, item });
    if (!terms) return;
    const { ids, negate } = terms;
    const model = ctx.schema.entity(target) as EntityModel | undefined;
    // A list of ids of a type that is gone links nothing.
    const sql = model ? ctx.dialect.jsonArrayLinksLive(rawCol(ctx, field), `"${model.table}"`, ids?.length) : '1 = 0';
    const bindings = (model ? (ids ?? []) : []) as string[];
    qb.whereRaw(negate ? `not (${sql})` : sql, bindings);
  };
}
