import type { AttributeWriteRules } from '../attributes/apply-plan';
import type { AttributeLinkObject } from '../attributes/record-attributes';
import { forbidden } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { FieldModel, LinkEnd } from '../definition/model';
import { issuesUnder } from '../errors';
import type { Transaction } from '../sql/database';
import { findMatching, optionListId } from '../sql/link-store';
import type { Owner } from '../sql/record-store';
import { sqlContext, type SqlContext } from '../sql/sql-context';
import { assertLinks, missingList, optionList } from './link-rules';
import { matchFields, severalMatches, type LinkObjects } from './link-objects';
import type { AfterCommit, Repository } from './repository';
import { rowFilter, rowRulesOf } from './row-rules';
import { assertMay } from './write-rules';

/** The write a link object is resolved in: its transaction, caller, and the work after commit. */
export interface LinkObjectWrite {
  trx: Transaction;
  ctx: RequestContext;
  after: AfterCommit;
}

/** What a link object is matched against: the link, its target, the object, the option list it must sit in. */
interface LinkObjectMatch {
  field: LinkEnd;
  target: Repository;
  object: Record<string, unknown>;
  listId: string | undefined;
}

/**
 * Find-or-create searches only what the caller could list: 403 without read rights on the target
 * entity type or on a matched field; under `own`, only the caller's records match (and under row
 * rules, only those they keep: see `matchingRecord`). Options of a link's own list are the
 * exception: they are read through the field.
 */
async function searchOwner(target: Repository, ctx: RequestContext, fields: Iterable<FieldModel>): Promise<Owner | undefined> {
  const access = await target.guard.access(ctx);
  const scope = assertMay(target.model, access, 'read');
  for (const field of fields) {
    if (!target.guard.canRead(access, field)) throw forbidden(`Not allowed to read ${target.model.name}.${field.name}`);
  }
  return scope.read === 'own' ? { userId: ctx.user?.id ?? '' } : undefined;
}

/**
 * An option of a link's own list is read through the field, as its name and `_meta.options` show
 * it: no right on the option type is needed to find one, but a field of the option that the
 * caller's roles hide there (`code`, `nameDeDE`) is no more a search key than it is shown (403).
 */
async function assertOptionFieldsShown(target: Repository, ctx: RequestContext, fields: Iterable<FieldModel>): Promise<void> {
  const access = await target.guard.access(ctx);
  for (const field of fields) {
    if (!access.readsThroughLink(target.model.name, field.name)) throw forbidden(`Not allowed to read ${target.model.name}.${field.name}`);
  }
}

/** Where a link object of a record's body is: `brand`, or `categories` and its place in the list. */
const placeInBody = (field: LinkEnd, index: number): (string | number)[] => (field.type === 'link' ? [field.name] : [field.name, index]);

/** A link object's fields as the target's values: 400 for fields that are no simple fields of it, nested objects, wrong types. */
function objectValues(field: LinkEnd, target: Repository, object: Record<string, unknown>): [FieldModel, unknown][] {
  matchFields(field, target.model, object);
  return [...target.validate(object, 'update')];
}

/** The link objects of a body (those of its links and of its single-link attributes), with where each is in it. */
function objectsOf({ objects, attributes = [] }: { objects: LinkObjects<LinkEnd>; attributes?: readonly AttributeLinkObject[] }): AttributeLinkObject[] {
  const all = [...objects].flatMap(([field, items]) => items.map((object, index) => ({ field, object: object as Record<string, unknown>, path: placeInBody(field, index) })));
  return [...all, ...attributes].filter(({ object }) => typeof object === 'object' && object !== null);
}

/**
 * The 400 of what is wrong inside the link objects of a body, whatever records they would match,
 * as finding or creating them would answer it: what a mass update checks before it starts, so
 * that such a body is refused once, not once per record (nor by a job).
 */
export function assertLinkObjectsValid(repo: Repository, body: { objects: LinkObjects<LinkEnd>; attributes?: readonly AttributeLinkObject[] }): void {
  for (const { field, object, path } of objectsOf(body)) {
    try {
      objectValues(field, repo.env.repository(field.target), object);
    } catch (error) {
      throw issuesUnder(error, path);
    }
  }
}

/**
 * The 403 of a link object the caller may not search with, whatever records it would match (no
 * read right on the target type, a match field it may not read): what a mass update checks
 * before it starts, as an update refuses it (the right to create, needed only when nothing
 * matches, is judged per record).
 */
export async function assertLinkObjectsSearchable(repo: Repository, ctx: RequestContext, body: { objects: LinkObjects<LinkEnd>; attributes?: readonly AttributeLinkObject[] }): Promise<void> {
  for (const { field, object } of objectsOf(body)) {
    const target = repo.env.repository(field.target);
    const fields = objectValues(field, target, object).map(([f]) => f);
    if (optionList(field)) await assertOptionFieldsShown(target, ctx, fields);
    else await searchOwner(target, ctx, fields);
  }
}

/** The id of the record a link object names, among those the caller could list; several are a 409. */
async function matchingRecord(sql: SqlContext, ctx: RequestContext, { field, target, object, listId }: LinkObjectMatch): Promise<string | undefined> {
  const fields = objectValues(field, target, object);
  if (listId) await assertOptionFieldsShown(target, ctx, fields.map(([f]) => f));
  const owner = listId ? undefined : await searchOwner(target, ctx, fields.map(([f]) => f));
  const found = await findMatching(sql, target.model, { fields, listId, owner, within: await rowFilter(target, ctx) });
  if (found.length > 1) throw severalMatches(field, target.model);
  return found[0];
}

/** The id of the list a link's options come from (400 when the list does not exist). */
async function listIdOf(sql: SqlContext, field: LinkEnd): Promise<string | undefined> {
  const list = optionList(field);
  if (!list) return undefined;
  const id = await optionListId(sql, list);
  if (!id) throw missingList(field, list);
  return id;
}

/**
 * A lock per object to find or create: requests that find-or-create the same new record take
 * turns, so that the later ones find the record the first made instead of making another.
 */
function lockKeys(objects: LinkObjects<LinkEnd>): string[] {
  const keys: string[] = [];
  for (const [field, items] of objects) {
    for (const item of items) {
      if (typeof item !== 'object' || item === null) continue;
      const entries = Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1));
      keys.push(`find-or-create:${field.target}:${optionList(field) ?? ''}:${JSON.stringify(entries)}`);
    }
  }
  return keys;
}

/** Where found ids go: the values of the write, by link. */
interface LinkValues<TField> {
  get(field: TField): unknown;
  set(field: TField, value: unknown): void;
}

/**
 * Finds or creates the records named by link objects, inside the caller's transaction, and puts
 * their ids into `values`. Several matches for one object are a 409. A record made here passes the
 * rules of every create (the caller needs the right to create it).
 */
export async function resolveLinkObjects<TField extends LinkEnd>(
  repo: Repository,
  write: LinkObjectWrite,
  { objects, values, pathOf = placeInBody }: { objects: LinkObjects<TField>; values: LinkValues<TField>; pathOf?: (field: TField, index: number) => (string | number)[] },
): Promise<void> {
  if (objects.size === 0) return;
  const sql = sqlContext(repo.env, write.trx);
  await sql.dialect.lock(write.trx, lockKeys(objects));
  for (const [field, items] of objects) {
    const target = repo.env.repository(field.target);
    const listId = await listIdOf(sql, field);
    const ids: string[] = [];
    for (const [index, item] of items.entries()) {
      if (typeof item === 'string') {
        ids.push(item);
        continue;
      }
      const object = item as Record<string, unknown>;
      try {
        const found = await matchingRecord(sql, write.ctx, { field, target, object, listId });
        // An option joins the field's list: the system sets that, not the client.
        ids.push(found ?? (await target.insertWithin(write, { body: listId ? { ...object, extensibleEnumId: listId } : object, sent: object })));
      } catch (error) {
        throw issuesUnder(error, pathOf(field, index));
      }
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
  { objects, values }: { objects: LinkObjects; values: LinkValues<FieldModel> },
): Promise<void> {
  const sql = sqlContext(repo.env, trx);
  for (const [field, [object]] of objects) {
    if (field.type !== 'link') continue;
    const target = repo.env.repository(field.target);
    const found = await matchingRecord(sql, ctx, { field, target, object: object as Record<string, unknown>, listId: await listIdOf(sql, field) }).catch((error: unknown) => {
      throw issuesUnder(error, placeInBody(field, 0));
    });
    if (found !== undefined) values.set(field, found);
  }
}

/**
 * The rules attribute values of a record's write pass: find-or-create of the object given for a
 * link attribute, and the link rules for linked ids, inside the record's transaction.
 */
export function attributeWriteRules(repo: Repository, ctx: RequestContext, after: AfterCommit): AttributeWriteRules {
  return {
    async resolveLinkObject(trx, field, { object, path }) {
      const values = new Map<LinkEnd, unknown>();
      await resolveLinkObjects(repo, { trx, ctx, after }, { objects: new Map([[field, [object]]]), values, pathOf: () => [...path] });
      return values.get(field) as string;
    },
    async assertLinks(trx, values) {
      await assertLinks(sqlContext(repo.env, trx), { ctx, access: await repo.guard.access(ctx), rows: rowRulesOf(repo, ctx) }, values);
    },
  };
}
