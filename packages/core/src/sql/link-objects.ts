import type { Knex } from 'knex';
import type { LinkObjectResolver } from '../attributes/apply-plan';
import type { RequestContext } from '../context';
import type { FieldModel } from '../definition/normalize';
import { findMatching, matchFields, optionListId, severalMatches, type LinkObjects } from './link-resolver';
import type { AfterCommit, Repository } from './repository';
import { sqlContext, type SqlContext } from './sql-context';

/** The write a link object is resolved in: its transaction, caller, and the work after commit. */
export interface LinkObjectWrite {
  trx: Knex.Transaction;
  ctx: RequestContext;
  after: AfterCommit;
}

/** What a link object is matched against: the link, its target, the object, the option list it must sit in. */
interface LinkObjectMatch {
  field: FieldModel;
  target: Repository;
  object: Record<string, unknown>;
  listId: string | undefined;
}

/** The id of the record a link object names, among those the caller could list; several are a 409. */
async function matchingRecord(sql: SqlContext<Knex.Transaction>, ctx: RequestContext, { field, target, object, listId }: LinkObjectMatch): Promise<string | undefined> {
  matchFields(field, target.model, object);
  const match = [...target.validate(object, 'update')];
  const found = await findMatching(sql, target.model, { fields: match, listId, restrict: await target.matchScope(ctx, match) });
  if (found.length > 1) throw severalMatches(field, target.model);
  return found[0];
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
      const found = await matchingRecord(sql, ctx, { field, target, object, listId });
      ids.push(found ?? (await target.insertWithin(write, { body: listId ? { ...object, extensibleEnumId: listId } : object })));
    }
    values.set(field, field.type === 'link' ? ids[0] : [...new Set([...((values.get(field) as string[]) ?? []), ...ids])]);
  }
}

/**
 * The ids of the records that single-link objects name, found but never created, put into
 * `values`: what an upsert looks its record up by. An object that names no record is left out: the
 * record made for it would be linked by no stored record.
 */
export async function findSingleLinkObjects(
  repo: Repository,
  { trx, ctx }: Pick<LinkObjectWrite, 'trx' | 'ctx'>,
  { objects, values }: { objects: LinkObjects; values: Map<FieldModel, unknown> },
): Promise<void> {
  const sql = sqlContext(repo.env, trx);
  for (const [field, [object]] of objects) {
    if (field.type !== 'link') continue;
    const target = repo.env.repository(field.target as string);
    const found = await matchingRecord(sql, ctx, { field, target, object: object as Record<string, unknown>, listId: await optionListId(sql, field) });
    if (found !== undefined) values.set(field, found);
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
