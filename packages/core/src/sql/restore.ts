import type { RequestContext } from '../context';
import { ApiError, notFound } from '../errors';
import { live } from './read-query';
import type { Repository, RestoreResult } from './repository';

/** Brings soft-deleted records back; one that would collide with a live unique value is an error. */
export async function restoreRecords(repo: Repository, ctx: RequestContext, ids: readonly string[]): Promise<RestoreResult> {
  const { scope } = await repo.guard.scope(ctx, 'delete');
  const { knex, dialect } = repo.env.database;
  const result: RestoreResult = { restored: 0, errors: [] };
  for (const id of ids) {
    try {
      const count = await repo.translated(() => {
        const qb = knex(repo.model.table)
          .update({ deleted: live(dialect), ...repo.modifiedBy(ctx) })
          .where({ id: String(id), deleted: dialect.toDb('bool', true) });
        if (scope.delete === 'own') repo.guard.ownOnly(ctx, qb);
        return qb;
      });
      if (count === 0) throw notFound(repo.model.name, String(id));
      result.restored += 1;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      result.errors.push({ id: String(id), code: error.code, message: error.message });
    }
  }
  return result;
}
