import type { Knex } from 'knex';
import type { LinkObjectResolver } from '../attributes/apply-plan';
import type { RequestContext } from '../context';
import type { FieldModel } from '../definition/normalize';
import { findMatching, matchFields, optionListId, severalMatches, type LinkObjects } from './link-resolver';
import type { AfterCommit, Repository } from './repository';
import { sqlContext } from './sql-context';

/** The write a link object is resolved in: its transaction, caller, and the work after commit. */
export interface LinkObjectWrite {
  trx: Knex.Transaction;
  ctx: RequestContext;
  after: AfterCommit;
}

/**
 * Finds or creates the records named by link objects, inside the caller's transaction, and
 * puts their ids into `values`. Several matches for one object are a 409.
 */
export async function resolveLinkObjects(
  repo: Repository,
  write: LinkObjectWrite,
  { objects, values }: { objects: LinkObjects; values: Map<FieldModel, unknown> },
): Promise<void> {
  const { trx, ctx } = write;
  const sql = sqlContext(repo.env, trx);
  for (const [field, items] of objects) {
    const target = repo.env.repository(field.target as string);
    const listId = await optionListId(sql, field);
    const ids: string[] = [];
    for (const item of items) {
      if (typeof item === 'string') {
        ids.push(item);
        continue;
      }
      const object = item as Record<string, unknown>;
      matchFields(field, target.model, object);
      const match = [...target.validate(object, 'update')];
      const found = await findMatching(sql, target.model, { fields: match, listId, restrict: await target.matchScope(ctx, match) });
      if (found.length > 1) throw severalMatches(field, target.model);
      ids.push(found[0] ?? (await target.insertWithin(write, { body: listId ? { ...object, extensibleEnumId: listId } : object })));
    }
    values.set(field, field.type === 'link' ? ids[0] : [...new Set([...((values.get(field) as string[]) ?? []), ...ids])]);
  }
}

/** Find-or-create of the object given for a link attribute, inside the record's transaction. */
export function linkObjectResolver(repo: Repository, ctx: RequestContext, after: AfterCommit): LinkObjectResolver {
  return async (trx, field, object) => {
    const values = new Map<FieldModel, unknown>();
    await resolveLinkObjects(repo, { trx, ctx, after }, { objects: new Map([[field, [object]]]), values });
    return values.get(field) as string;
  };
}
