import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import { notFound } from '../errors';
import { findAnyRow, modifiedColumns, purgeRow, softDeleteRow } from '../sql/record-store';
import { sqlContext } from '../sql/sql-context';
import { inTransaction } from '../sql/transaction';
import { visibleRecord } from './read';
import type { Repository } from './repository';
import { rowChange } from './write-values';
import { assertMay, assertRecordLevel, isOwn } from './write-rules';

/**
 * The record a permanent delete removes: a live one the caller may see, or one already
 * soft-deleted (which no read shows), judged by the same read level.
 */
async function recordToPurge(repo: Repository, ctx: RequestContext, id: string): Promise<ApiRecord> {
  const access = await repo.guard.access(ctx);
  const scope = assertMay(repo.model, access, 'read');
  const row = await repo.translated(() => findAnyRow(repo.sql, repo.model, { id, fields: [...repo.ownerFields] }));
  if (!row || (scope.read === 'own' && !isOwn(ctx, row))) throw notFound(repo.model.name, id);
  return row.deleted ? ({ ...row, id } as ApiRecord) : visibleRecord(repo, ctx, { id });
}

/**
 * Soft-deletes (the row stays, invisible, and frees its unique values) or removes the row, also
 * one soft-deleted before.
 */
export async function deleteRecord(repo: Repository, ctx: RequestContext, { id, permanently }: { id: string; permanently?: boolean }): Promise<void> {
  const existing = permanently ? await recordToPurge(repo, ctx, id) : await visibleRecord(repo, ctx, { id });
  const { access } = await repo.guard.scope(ctx, 'delete');
  assertRecordLevel(repo.model, { ctx, access }, { record: existing, action: 'delete' });
  await repo.env.hooks.run('beforeDelete', { ctx, model: repo.model, id, existing });
  await repo.translated(() =>
    inTransaction(repo.env.database, async (trx) => {
      const sql = sqlContext(repo.env, trx);
      if (!permanently) return softDeleteRow(sql, repo.model, { id, row: modifiedColumns(rowChange(ctx)) });
      await purgeRow(sql, repo.model, id);
      await repo.env.attributes?.onPermanentDelete(trx, repo.model, id);
    }),
  );
  await repo.env.hooks.run('afterDelete', { ctx, model: repo.model, id, existing });
}
