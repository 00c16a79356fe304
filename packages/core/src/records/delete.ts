import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import { isValidId } from '../definition/validate-record';
import type { EntityModel } from '../definition/model';
import { ApiError, notFound, stillLinked } from '../errors';
import { insertChanges } from '../sql/change-store';
import { requiredLinkTo } from '../sql/link-store';
import { findAnyRow, isLive, modifiedColumns, purgeRow, softDeleteRow } from '../sql/record-store';
import { sqlContext, type SqlContext } from '../sql/sql-context';
import { inTransactionAgain } from '../sql/transaction';
import { changeOf, detachedChanges, ownershipOf } from './changes';
import { visibleRecord } from './read';
import { assertVersion, type Preconditions } from './update';
import { preconditionFailed } from './version';
import type { Repository } from './repository';
import { rowFilter } from './row-rules';
import { rowChange } from './write-values';
import { assertMay, assertRecordLevel, isOwn } from './write-rules';

/**
 * The record a permanent delete removes: a live one the caller may see, or one already
 * soft-deleted (which no read shows), judged by the same read level.
 */
async function recordToPurge(repo: Repository, ctx: RequestContext, id: string): Promise<ApiRecord> {
  const access = await repo.guard.access(ctx);
  const scope = assertMay(repo.model, access, 'read');
  // No record has such an id (a NUL, which PostgreSQL cannot even compare): 404, as a read answers.
  if (!isValidId(id)) throw notFound(repo.model.name, id);
  const within = await rowFilter(repo, ctx);
  const row = await repo.translated(() => findAnyRow(repo.sql, repo.model, { id, fields: [...repo.ownerFields], within }));
  if (!row || (scope.read === 'own' && !isOwn(ctx, row))) throw notFound(repo.model.name, id);
  if (!row.deleted) return visibleRecord(repo, ctx, { id });
  // No read shows a soft-deleted record: only who may remove it learns that it exists.
  const record = { ...row, id } as ApiRecord;
  if (!(await mayDelete(repo, ctx, record))) throw notFound(repo.model.name, id);
  return record;
}

/** Whether the caller may delete this record (the rules `deleteRecord` applies, without their 403). */
async function mayDelete(repo: Repository, ctx: RequestContext, record: ApiRecord): Promise<boolean> {
  try {
    const { access } = await repo.guard.scope(ctx, 'delete');
    assertRecordLevel(repo.model, { ctx, access }, { record, action: 'delete' });
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return false;
    throw error;
  }
}

/**
 * A permanent delete never leaves a record without a value it must have: while a required link
 * of another record (a unit's measure, an option's list), live or in the bin, names the record,
 * it is 409 and nothing changes. Those records are deleted permanently first (or, where the link
 * may change, linked elsewhere).
 */
async function assertNotRequired(sql: SqlContext, model: EntityModel, id: string): Promise<void> {
  const held = await requiredLinkTo(sql, model, id);
  if (held) throw stillLinked(model.name, id, { entity: held.model.name, field: held.field.name });
}

/**
 * Why a delete found nothing to delete once in its transaction: another request wrote the record
 * meanwhile, so `If-Match` no longer holds (412); or deleted it meanwhile (404, as a delete sent
 * after that one answers; it was logged once, by that request).
 */
async function notDeleted(sql: SqlContext, { repo, id, permanently, version }: { repo: Repository; id: string; permanently?: boolean; version?: number }): Promise<ApiError> {
  if (version === undefined) return notFound(repo.model.name, id);
  const stillThere = permanently ? (await findAnyRow(sql, repo.model, { id, fields: [] })) !== undefined : await isLive(sql, repo.model, { id });
  return stillThere ? preconditionFailed(repo.model.name, id) : notFound(repo.model.name, id);
}

/**
 * Soft-deletes (the row stays, invisible, and frees its unique values) or removes the row, also
 * one soft-deleted before.
 */
export async function deleteRecord(repo: Repository, ctx: RequestContext, { id, permanently, ifMatch, ifNoneMatch }: Preconditions & { id: string; permanently?: boolean }): Promise<void> {
  const existing = permanently ? await recordToPurge(repo, ctx, id) : await visibleRecord(repo, ctx, { id });
  const { access } = await repo.guard.scope(ctx, 'delete');
  assertRecordLevel(repo.model, { ctx, access }, { record: existing, action: 'delete' });
  // Preconditions are judged after the rights (RFC 9110 §13.2.1): no right is 403 whatever the version.
  const version = assertVersion(repo, { existing, id, ifMatch, ifNoneMatch });
  await repo.env.hooks.run('beforeDelete', { ctx, model: repo.model, id, existing });
  const change = changeOf(ctx, { entityType: repo.model.name, recordId: id, action: 'Delete', diff: {}, owner: ownershipOf(existing) });
  await repo.translated(() =>
    inTransactionAgain(repo.env.database, async (trx) => {
      const sql = sqlContext(repo.env, trx);
      if (permanently) await assertNotRequired(sql, repo.model, id);
      const values = permanently ? await repo.env.attributes?.purging(sql, repo.model, id) : undefined;
      const modification = rowChange(ctx, change.createdAt);
      const purged = permanently ? await purgeRow(sql, repo.model, { id, version, values, change: modification }) : undefined;
      const done = permanently ? purged !== undefined : await softDeleteRow(sql, repo.model, { id, row: modifiedColumns(modification), version });
      if (!done) throw await notDeleted(sql, { repo, id, permanently, version });
      if (permanently) await repo.env.attributes?.onPermanentDelete(trx, repo.model, id);
      // A permanent delete of a record deleted before is logged too: the row is gone now. Each
      // record whose links (or link values) named it logs their loss.
      await insertChanges(sql, [change, ...detachedChanges(ctx, purged ?? [], change.createdAt)]);
    }),
  );
  await repo.env.hooks.run('afterDelete', { ctx, model: repo.model, id, existing });
}
