import type { UserAccess } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { FieldModel } from '../definition/normalize';
import { isValidId } from '../definition/validate-record';
import { ApiError } from '../errors';
import { nowDateTime } from '../time';
import { uuidv7 } from '../util/uuid';
import { linkObjectResolver, resolveLinkObjects, type LinkObjectWrite } from './link-objects';
import { assertOptionsInList, splitLinkObjects, type LinkObjects } from './link-resolver';
import { assertLinkTargets, writeMultipleLink } from './link-writes';
import { answerWrite, findById } from './read-records';
import type { Repository } from './repository';
import type { AfterCommit } from './repository-types';
import { sqlContext } from './sql-context';
import { assertWritable, keysSetByHooks, modifiedBy, toRow } from './write-values';

/** Creates a record; the body may carry an `id` of 1 to 64 characters `[A-Za-z0-9_-]`. */
export async function createRecord<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, body: Record<string, unknown>): Promise<TRecord> {
  // Rights and before-hooks may read the database: settle them before the transaction holds
  // a connection (SQLite has one).
  await repo.guard.scope(ctx, 'create');
  const attributes = await repo.env.attributes?.prepareWrite(ctx, repo.model, body);
  const input = { ...(attributes?.body ?? body) };
  const sent = { ...input };
  await repo.env.hooks.run('beforeCreate', { ctx, model: repo.model, data: input });
  const fromHooks = keysSetByHooks(sent, input);
  const after: AfterCommit = [];
  const id = await repo.translated(() =>
    repo.env.database.knex.transaction(async (trx) => {
      const created = await insertRecord(repo, { trx, ctx, after }, { body: input, hooked: fromHooks });
      await attributes?.apply?.(trx, created, linkObjectResolver(repo, ctx, after));
      return created;
    }),
  );
  for (const fn of after) await fn();
  return answerWrite(repo, ctx, { kind: 'create', id, afterHook: (record) => repo.env.hooks.run('afterCreate', { ctx, model: repo.model, id, record }) });
}

/** The id of a new record: the one in the body, else a new one. */
function newRecordId(input: Record<string, unknown>): string {
  const id = input.id === undefined || input.id === null ? uuidv7() : input.id;
  if (!isValidId(id)) {
    throw new ApiError('CORE_INVALID_ID', 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -', { details: { id } });
  }
  return id;
}

/** 403 when the body sets a field (or a link object) the caller may not edit. */
function assertCreatable(repo: Repository, access: UserAccess, body: { data: Record<string, unknown>; objects: LinkObjects; values: Map<FieldModel, unknown> }): void {
  const { data, objects, values } = body;
  const sent = new Set([...Object.keys(data), ...[...objects.keys()].map((f) => f.key)]);
  repo.guard.assertEditable(access, new Map([...values].filter(([f]) => sent.has(f.key))), undefined);
  for (const field of objects.keys()) repo.guard.assertEditable(access, new Map([[field, null]]), undefined);
}

/** Writes the row of a new record and its multiple links. */
async function insertRow(repo: Repository, write: LinkObjectWrite, record: { id: string; values: Map<FieldModel, unknown> }): Promise<void> {
  const { trx, ctx } = write;
  const { id, values } = record;
  const sql = sqlContext(repo.env, trx);
  const { dialect } = sql;
  const { row, links } = toRow(dialect, values);
  const now = nowDateTime();
  const [userId, actorId] = [ctx.user?.id ?? null, ctx.actor?.id ?? null];
  Object.assign(row, { id, created_at: now, created_by_id: userId, created_by_actor_id: actorId, ...modifiedBy(ctx), modified_at: now });
  await assertLinkTargets(sql, values);
  await assertOptionsInList(sql, values);
  await repo.translated(() => trx(repo.model.table).insert(row));
  for (const [field, ids] of links) await writeMultipleLink(sql, field, { ownerId: id, ids, previous: [] });
}

/**
 * Records made by find-or-create get their after-hook once the transaction commits (the main
 * record's is run by create(), with the record it returns).
 */
function afterCreateOnCommit(repo: Repository, write: LinkObjectWrite, id: string): void {
  if (!repo.env.hooks.has('afterCreate', repo.model.name)) return;
  write.after.push(async () => {
    const record = (await findById(repo, id)) as ApiRecord;
    await repo.env.hooks.run('afterCreate', { ctx: write.ctx, model: repo.model, id, record });
  });
}

/**
 * The create inside a transaction the caller owns (also find-or-create of linked records,
 * whose before-hooks run inside that transaction). `hooked` is set when create() already ran
 * the before-hooks: the keys they set.
 */
export async function insertRecord(repo: Repository, write: LinkObjectWrite, { body, hooked }: { body: Record<string, unknown>; hooked?: ReadonlySet<string> }): Promise<string> {
  const { ctx } = write;
  const { access } = await repo.guard.scope(ctx, 'create');
  const input = { ...body };
  if (!hooked) await repo.env.hooks.run('beforeCreate', { ctx, model: repo.model, data: input });
  const fromHooks = hooked ?? keysSetByHooks(body, input);
  const id = newRecordId(input);
  const { data, objects } = splitLinkObjects(repo.model, input);
  const values = repo.validate(data, 'create');
  assertWritable(values, undefined, fromHooks);
  assertCreatable(repo, access, { data, objects, values });
  await resolveLinkObjects(repo, write, { objects, values });
  await insertRow(repo, write, { id, values });
  if (!hooked) afterCreateOnCommit(repo, write, id);
  return id;
}
