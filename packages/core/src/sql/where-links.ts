import type { Knex } from 'knex';
import type { EntityModel, MultipleLinkField } from '../definition/model';
import { asList, coerceScalar, invalidQuery } from './where-values';
import { col, rawCol, type Apply, type WhereContext } from './where-types';

/** The link operators of `where`: on link fields (`linkOp`) and on multiple-link attributes (`jsonLinkOp`). */

type Builder = Knex.QueryBuilder;

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
      const c = col(ctx, field);
      const target = ctx.schema.entity(field.target) as EntityModel;
      const liveTargets = (sub: Builder) => {
        sub.select('t.id').from({ t: target.table }).where('t.deleted', ctx.dialect.toDb('bool', false) as never);
        if (ids) sub.whereIn('t.id', ids as string[]);
      };
      if (!negate) qb.whereIn(c, liveTargets);
      else qb.where((w) => w.whereNull(c).orWhereNotIn(c, liveTargets));
      return;
    }
    const sub = linkSubquery(ctx, field, ids ?? null);
    qb.whereRaw(`"${ctx.model.table}".id ${negate ? 'not in' : 'in'} (${sub})`, (ids ?? []) as string[]);
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
