import type { RequestContext } from '../context';
import { ApiError, notFound } from '../errors';
import { insertChanges } from '../sql/change-store';
import { findAnyRow, modifiedColumns, restoreRow } from '../sql/record-store';
import { sqlContext } from '../sql/sql-context';
import { inTransactionAgain } from '../sql/transaction';
import { eventLoopTurns } from '../util/event-loop';
import type { Repository, RestoreResult } from './repository';
import { changeOf, ownershipOf } from './changes';
import { rowFilter } from './row-rules';
import { rowChange } from './write-values';

/**
 * Brings soft-deleted records back: the right to delete them is needed (under `own`, only the
 * caller's own come back; under row rules, only those they keep: any other is not found); one
 * that would collide with a live unique value is an error.
 */
export async function restoreRecords(repo: Repository, ctx: RequestContext, ids: readonly string[]): Promise<RestoreResult> {
  const { scope } = await repo.guard.scope(ctx, 'delete');
  const owner = scope.delete === 'own' ? { userId: ctx.user?.id ?? '' } : undefined;
  const within = await rowFilter(repo, ctx);
  const result: RestoreResult = { restored: 0, errors: [] };
  // One transaction per record: on SQLite a long list of them would keep every other request waiting.
  const turn = eventLoopTurns();
  // An id listed twice is one record, restored once (as entityMassUpdate updates it once): its
  // second mention is no record in the bin, and no error of the client's.
  for (const id of new Set(ids.map(String))) {
    await turn();
    try {
      const restored = await repo.translated(() =>
        inTransactionAgain(repo.env.database, async (trx) => {
          const sql = sqlContext(repo.env, trx);
          if (!(await restoreRow(sql, repo.model, { id, row: modifiedColumns(rowChange(ctx)), owner, within }))) return false;
          await repo.env.attributes?.onRestore(trx, repo.model, id);
          const stored = await findAnyRow(sql, repo.model, { id, fields: repo.ownerFields });
          await insertChanges(sql, [changeOf(ctx, { entityType: repo.model.name, recordId: id, action: 'Restore', diff: {}, owner: ownershipOf(stored ?? {}) })]);
          return true;
        }),
      );
      if (!restored) throw notFound(repo.model.name, id);
      result.restored += 1;
      await repo.env.hooks.run('afterRestore', { ctx, model: repo.model, id });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      result.errors.push({ id, code: error.code, message: error.message });
    }
  }
  return result;
}
