import type { RequestContext } from '../context';
import { detachEverywhere } from './link-writes';
import { live } from './read-query';
import { visibleRecord } from './read-records';
import type { Repository } from './repository';
import { sqlContext } from './sql-context';
import { modifiedBy } from './write-values';

/** Soft-deletes (the row stays, invisible, and frees its unique values) or removes the row. */
export async function deleteRecord(repo: Repository, ctx: RequestContext, { id, permanently }: { id: string; permanently?: boolean }): Promise<void> {
  const existing = await visibleRecord(repo, ctx, { id });
  const { scope } = await repo.guard.scope(ctx, 'delete');
  repo.guard.assertLevel(ctx, existing, { level: scope.delete, action: 'delete' });
  await repo.env.hooks.run('beforeDelete', { ctx, model: repo.model, id, existing });
  const { knex, dialect } = repo.env.database;
  await repo.translated(() =>
    knex.transaction(async (trx) => {
      if (permanently) {
        await detachEverywhere(sqlContext(repo.env, trx), repo.model, id);
        await repo.env.attributes?.onPermanentDelete(trx, repo.model, id);
        await trx(repo.model.table).delete().where({ id });
      } else {
        await trx(repo.model.table)
          .update({ deleted: dialect.toDb('bool', true), ...modifiedBy(ctx) })
          .where({ id, deleted: live(dialect) });
      }
    }),
  );
  await repo.env.hooks.run('afterDelete', { ctx, model: repo.model, id, existing });
}
