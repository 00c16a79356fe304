import type { RequestContext } from '../context';
import { isLinkField } from '../definition/model';
import { ApiError } from '../errors';
import { isLive, rowsWithin, type RowFilter } from '../sql/record-store';
import type { SqlContext } from '../sql/sql-context';
import { applyWhere } from '../sql/where';
import type { Repository } from './repository';

/**
 * Row rules: the `where` items that `beforeFind` hooks (a definition's `access` is one) add for a
 * caller, which every read and write of the entity type keeps to. Exports their resolution (once
 * per request context and entity type; none for the system context, and no work at all for an
 * entity type without such hooks), and the check a write makes after it wrote a record (the
 * record must still meet them, as PostgreSQL's `WITH CHECK` does).
 */

export type { RowFilter } from '../sql/record-store';

/** The row rules of any entity type for one caller. */
export type RowRules = (entity: string) => Promise<RowFilter | undefined>;

const NONE: Promise<undefined> = Promise.resolve(undefined);

/** Row rules already resolved, by request context and entity type. */
const resolved = new WeakMap<RequestContext, Map<string, Promise<RowFilter | undefined>>>();

/** Runs the `beforeFind` hooks and compiles what they add; a rule that is no valid where is the server's fault (500). */
async function resolve(repo: Repository, ctx: RequestContext): Promise<RowFilter | undefined> {
  const where: unknown[] = [];
  await repo.env.hooks.run('beforeFind', { ctx, model: repo.model, where });
  if (where.length === 0) return undefined;
  const whereCtx = { schema: repo.env.schema, dialect: repo.env.database.dialect, model: repo.model };
  const filter: RowFilter = (qb) => applyWhere(qb, where, whereCtx);
  try {
    const probe = repo.sql.db(repo.model.table).select('id');
    filter(probe);
    probe.toSQL();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ApiError('CORE_INTERNAL', `The row rules of ${repo.model.name} are no valid where items: ${reason}`, { cause: error });
  }
  return filter;
}

/** The row rules of this entity type for the caller, or undefined when none apply. */
export function rowFilter(repo: Repository, ctx: RequestContext): Promise<RowFilter | undefined> {
  if (!ctx.user || !repo.env.hooks.has('beforeFind', repo.model.name)) return NONE;
  let byEntity = resolved.get(ctx);
  if (!byEntity) resolved.set(ctx, (byEntity = new Map()));
  let filter = byEntity.get(repo.model.name);
  if (!filter) {
    filter = resolve(repo, ctx);
    byEntity.set(repo.model.name, filter);
    // A rule that failed is asked again by the next call (it answers with the error meanwhile).
    filter.catch(() => byEntity.delete(repo.model.name));
  }
  return filter;
}

/** The row rules of every entity type for one caller. */
export const rowRulesOf = (repo: Repository, ctx: RequestContext): RowRules => (entity) => rowFilter(repo.env.repository(entity), ctx);

/**
 * Resolves the row rules of an entity type and of its link targets before a write opens its
 * transaction: a rule may read the database (the caller's tenant), which it must not do while the
 * transaction holds the connection (SQLite has one). Answers the entity type's own.
 */
export async function prepareRowRules(repo: Repository, ctx: RequestContext): Promise<RowFilter | undefined> {
  if (!ctx.user) return undefined;
  const targets = new Set(repo.model.fields.filter(isLinkField).map((f) => f.target));
  // Attribute values may link to any entity type: those with rules of their own.
  if (repo.model.def.hasAttributes) for (const entity of repo.env.hooks.entitiesWith('beforeFind')) if (repo.env.schema.entity(entity)) targets.add(entity);
  targets.delete(repo.model.name);
  await Promise.all([...targets].map((entity) => rowFilter(repo.env.repository(entity), ctx)));
  return rowFilter(repo, ctx);
}

/** 403 for a write that left a record outside the caller's row rules (see `assertWithinRules`). */
export const outsideRules = (entity: string): ApiError =>
  new ApiError('CORE_OUTSIDE_ROW_RULES', `The ${entity} would be outside the records you may access`, { details: { entity } });

/**
 * Inside the write's transaction, after the record was written: 403 `CORE_OUTSIDE_ROW_RULES` when
 * it no longer meets the caller's row rules (the transaction is rolled back, nothing is stored).
 */
export async function assertWithinRules(repo: Repository, { sql, ctx }: { sql: SqlContext; ctx: RequestContext }, id: string): Promise<void> {
  const within = await rowFilter(repo, ctx);
  if (within && !(await isLive(sql, repo.model, { id, within }))) throw outsideRules(repo.model.name);
}

/**
 * Whether the caller's row rules keep a record, live or deleted (a change of it may be shown):
 * undefined, at no cost, when the entity type has no rules; else the answer of one query.
 */
export function recordWithinRules(repo: Repository, ctx: RequestContext, id: string): Promise<boolean> | undefined {
  if (!ctx.user || !repo.env.hooks.has('beforeFind', repo.model.name)) return undefined;
  return rowFilter(repo, ctx).then(async (within) => !within || (await repo.translated(() => rowsWithin(repo.sql, repo.model, { ids: [id], within }))).has(id));
}
