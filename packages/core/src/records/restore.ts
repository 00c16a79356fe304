import type { RequestContext } from '../context';
import { ApiError, notFound } from '../errors';
import { modifiedColumns, restoreRow } from '../sql/record-store';
import type { Repository, RestoreResult } from './repository';
import { rowChange } from './write-values';

/**
 * Brings soft-deleted records back: the right to delete them is needed (under `own`, only the
 * caller's own come back); one that would collide with a live unique value is an error.
 */
export async function restoreRecords(repo: Repository, ctx: RequestContext, ids: readonly string[]): Promise<RestoreResult> {
  const { scope } = await repo.guard.scope(ctx, 'delete');
  const owner = scope.delete === 'own' ? { userId: ctx.user?.id ?? '' } : undefined;
  const result: RestoreResult = { restored: 0, errors: [] };
  for (const id of ids) {
    try {
      const restored = await repo.translated(() => restoreRow(repo.sql, repo.model, { id: String(id), row: modifiedColumns(rowChange(ctx)), owner }));
      if (!restored) throw notFound(repo.model.name, String(id));
      result.restored += 1;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      result.errors.push({ id: String(id), code: error.code, message: error.message });
    }
  }
  return result;
}
