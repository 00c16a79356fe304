import type { PreparedAttributeWrite } from '../attributes/record-attributes';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { FieldModel, LinkField } from '../definition/model';
import { isValidId } from '../definition/validate-record';
import { ApiError } from '../errors';
import { insertChanges, insertLogged, type NewChange, type ReadBack } from '../sql/change-store';
import type { Transaction } from '../sql/database';
import type { SqlContext } from '../sql/sql-context';
import { writeMultipleLink } from '../sql/link-store';
import { createdColumns, insertRow, toRow } from '../sql/record-store';
import { sqlContext } from '../sql/sql-context';
import { inTransactionAgain } from '../sql/transaction';
import { uuidv7 } from '../util/uuid';
import { changeOf, diffOf, movedLinkChanges, ownershipOf, type Diff } from './changes';
import { attributeWriteRules, resolveLinkObjects, type LinkObjectWrite } from './find-or-create';
import { assertLinks, assertOtherSide, linkGuards } from './link-rules';
import { splitLinkObjects } from './link-objects';
import { deriveOptionCode, derivesCode } from './option-codes';
import { answerWrite, findById, planWriteAnswer } from './read';
import type { Repository } from './repository';
import type { AfterCommit } from './repository-types';
import { assertWithinRules, prepareRowRules, rowRulesOf } from './row-rules';
import { keysSetByHooks, rowChange } from './write-values';
import { assertClientMayChooseId, assertMay, assertSentBody, checkFields, sentFields } from './write-rules';

/**
 * What to create: the body, which may carry an `id` of 1 to 64 characters `[A-Za-z0-9_-]`, and the
 * id the system gives the record when the body has none (judged as the server's own choice, not
 * the client's).
 */
export interface CreateInput {
  body: Record<string, unknown>;
  newId?: string;
}

/** Creates a record. */
export async function createRecord<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, { body, newId }: CreateInput): Promise<TRecord> {
  // Rights and before-hooks may read the database: settle them before the transaction holds
  // a connection (SQLite has one).
  const access = await repo.guard.access(ctx);
  assertMay(repo.model, access, 'create');
  const ruled = (await prepareRowRules(repo, ctx)) !== undefined;
  const attributes = await repo.env.attributes?.prepareWrite(ctx, repo.model, body);
  const input = { ...(attributes?.body ?? body) };
  const sent = { ...input };
  if (repo.env.hooks.has('beforeCreate', repo.model.name)) assertSentBody(repo, access, sent);
  await repo.env.hooks.run('beforeCreate', { ctx, model: repo.model, data: input });
  if (newId !== undefined && (input.id === undefined || input.id === null)) input.id = newId;
  const after: AfterCommit = [];
  const newRecord = { body: input, sent, hooksRan: true, attributes };
  const answer = await planWriteAnswer(repo, ctx, 'create');
  const { id, read } = await repo.translated(
    async () =>
      (!ruled && inOneStep(repo, newRecord) ? await createInOneStep(repo, ctx, { newRecord, readBack: answer.read.readBack }) : undefined) ?? {
        id: await inTransactionAgain(repo.env.database, (trx) => {
          // What a try that the database ended (a deadlock) left to run after it is not run.
          after.length = 0;
          return insertRecord(repo, { trx, ctx, after }, newRecord);
        }),
      },
  );
  for (const fn of after) await fn();
  const afterHook = repo.env.hooks.has('afterCreate', repo.model.name) ? (record: ApiRecord) => repo.env.hooks.run('afterCreate', { ctx, model: repo.model, id, record }) : undefined;
  return answerWrite(repo, ctx, { plan: answer, id, afterHook, read });
}

/** The id of a new record: the one in the body, else a new one. */
function newRecordId(input: Record<string, unknown>): string {
  const id = input.id === undefined || input.id === null ? uuidv7() : input.id;
  if (!isValidId(id)) {
    const message = 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -';
    throw new ApiError('CORE_INVALID_ID', message, { details: { id, issues: [{ path: ['id'], code: 'invalid_format', message }] } });
  }
  return id;
}

/** Writes the row of a new record and its multiple links. */
async function insertValues(repo: Repository, write: LinkObjectWrite, record: { id: string; values: Map<FieldModel, unknown> }): Promise<void> {
  const sql = sqlContext(repo.env, write.trx);
  const { row, links } = toRow(sql.dialect, record.values);
  // One time for the record and for those whose link column its links move.
  const creation = rowChange(write.ctx);
  Object.assign(row, { id: record.id, ...createdColumns(creation) });
  await repo.translated(() => insertRow(sql, repo.model, row));
  const writer = { ctx: write.ctx, access: await repo.guard.access(write.ctx), rows: rowRulesOf(repo, write.ctx) };
  for (const [field, ids] of links) {
    await assertOtherSide(sql, writer, { field, ids });
    await insertChanges(sql, movedLinkChanges(write.ctx, await writeMultipleLink(sql, field, { ownerId: record.id, ids, previous: [], change: creation })));
  }
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

/** A body to create a record from: what the client sent of it (default: all), and whether the before-hooks ran already. */
export interface NewRecord {
  body: Record<string, unknown>;
  /** The keys the client sent, as sent: rights and link rules judge these (not what hooks or the system add). */
  sent?: Record<string, unknown>;
  hooksRan?: boolean;
  /** Attribute values the body named (`Flatten-Attributes: true`), written with the record. */
  attributes?: PreparedAttributeWrite;
}

/**
 * The create inside a transaction the caller owns (also find-or-create of linked records, whose
 * before-hooks run inside that transaction).
 */
export async function insertRecord(repo: Repository, write: LinkObjectWrite, newRecord: NewRecord): Promise<string> {
  const { ctx, trx } = write;
  const sql = sqlContext(repo.env, trx);
  const { id, access, values, named, objects } = await decideNew(repo, { ctx, sql, trx }, newRecord);
  await resolveLinkObjects<LinkField>(repo, write, { objects, values });
  await assertLinks(sql, { ctx, access, rows: rowRulesOf(repo, ctx) }, new Map(named.map((f) => [f, values.get(f)])));
  await insertValues(repo, write, { id, values });
  await assertWithinRules(repo, { sql, ctx }, id);
  const applied = await newRecord.attributes?.apply?.(trx, id, attributeWriteRules(repo, ctx, write.after));
  await insertChanges(sql, [createChange(repo, ctx, { id, values, diff: applied?.diff })]);
  if (!newRecord.hooksRan) afterCreateOnCommit(repo, write, id);
  return id;
}

/** The rules and values of a new record, judged before anything is written: its id, values, and the fields the client named. */
async function decideNew(repo: Repository, { ctx, sql, trx }: { ctx: RequestContext; sql: SqlContext; trx?: Transaction }, { body, sent = body, hooksRan }: NewRecord) {
  const access = await repo.guard.access(ctx);
  assertMay(repo.model, access, 'create');
  assertClientMayChooseId(repo.model, sent.id);
  const input = { ...body };
  if (!hooksRan && repo.env.hooks.has('beforeCreate', repo.model.name)) {
    assertSentBody(repo, access, sent);
    await repo.env.hooks.run('beforeCreate', { ctx, model: repo.model, data: input });
  }
  if (trx) await deriveOptionCode(repo, { sql, trx, body: input });
  const id = newRecordId(input);
  const { data, objects } = splitLinkObjects(repo.model, input);
  const values = repo.validate(data, 'create', new Set(objects.keys()));
  const named = sentFields(values, { sent, objects: objects.keys() });
  checkFields(repo.model, access, { values, sent: named, fromHooks: keysSetByHooks(sent, input) });
  return { id, access, values, named, objects };
}

/** The `Create` change of a new record (its values, and the attributes written with it). */
function createChange(repo: Repository, ctx: RequestContext, { id, values, diff }: { id: string; values: Map<FieldModel, unknown>; diff?: Diff }): NewChange {
  const owner = ownershipOf({ createdById: ctx.user?.id, assignedUserId: values.get(repo.model.field.get('assignedUser') as FieldModel) });
  return changeOf(ctx, { entityType: repo.model.name, recordId: id, action: 'Create', diff: { ...diffOf(values), ...diff }, owner });
}

/**
 * Whether a create needs no transaction: its row and its change go in one statement (PostgreSQL),
 * which judges its single links too where it can (`linkGuards`; the others are checked before
 * it). Not for what writes more than the row or must be judged after
 * it: link objects (find-or-create), multiple links, attributes, derived option codes, and row
 * rules of the entity type (judged on the stored row, in the transaction; the caller asks).
 */
function inOneStep(repo: Repository, { body, attributes }: NewRecord): boolean {
  if (!repo.env.database.dialect.writableCte || attributes?.apply || derivesCode(repo, body)) return false;
  const { model } = repo;
  if (Object.keys(body).some((key) => (model.byKey.get(key) ?? model.field.get(key))?.type === 'linkMultiple')) return false;
  return splitLinkObjects(model, body).objects.size === 0;
}

/**
 * A create that `inOneStep` allows: the same rules as `insertRecord`, then one statement, which
 * also reads the record back for the answer where it can (`readBack`). Undefined when its values
 * turn out to hold a multiple link after all (a default): the caller creates it in a transaction
 * then, judged again (nothing was written).
 */
async function createInOneStep(
  repo: Repository,
  ctx: RequestContext,
  { newRecord, readBack }: { newRecord: NewRecord; readBack?: ReadBack },
): Promise<{ id: string; read?: Record<string, unknown>[] } | undefined> {
  const sql = sqlContext(repo.env, repo.env.database.knex);
  const { id, access, values, named, objects } = await decideNew(repo, { ctx, sql }, newRecord);
  const { row, links } = toRow(sql.dialect, values);
  if (objects.size > 0 || links.length > 0) return undefined;
  const writer = { ctx, access, rows: rowRulesOf(repo, ctx) };
  const linked = new Map(named.map((f) => [f, values.get(f)]));
  Object.assign(row, { id, ...createdColumns(rowChange(ctx)) });
  const change = createChange(repo, ctx, { id, values });
  // Links the insert judges itself (holding them, as every check of links does) cost no statement
  // before it.
  const guards = await linkGuards(sql, writer, linked);
  const guarded = guards && (await insertLogged(sql, repo.model, { row, change, readBack, guards }));
  if (guarded?.written) return { id, read: guarded.read };
  // Other links, or a guarded one that named no live record (its 400, or the insert once linked
  // meanwhile): checked in the insert's transaction, which holds the records they name until it
  // commits (`Hold` in link-store.ts): no permanent delete of one leaves the record linked to nothing.
  const done = await inTransactionAgain(repo.env.database, async (trx) => {
    const held = sqlContext(repo.env, trx);
    await assertLinks(held, writer, linked);
    return insertLogged(held, repo.model, { row, change, readBack });
  });
  return { id, read: done.read };
}
