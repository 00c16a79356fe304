import type { UserAccess } from '../auth/access-control';
import type { PreparedAttributeWrite } from '../attributes/record-attributes';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import { isStoredField, type FieldModel, type LinkField, type MultipleLinkField, type StoredField } from '../definition/model';
import { isValidId } from '../definition/validate-record';
import { ApiError, notFound } from '../errors';
import type { RecordHookEvent } from '../hooks';
import { currentLinkIds, lockLinkedRows, writeMultipleLink } from '../sql/link-store';
import { insertChanges, updateLogged, type ReadBack, type RowWritten } from '../sql/change-store';
import { updateCompared } from '../sql/compared-update';
import { isLive, keyColumns, modifiedColumns, toRow, updateRow, type RowChange } from '../sql/record-store';
import { VERSION_COLUMN } from '../sql/schema-sync';
import { sqlContext, type SqlContext } from '../sql/sql-context';
import { inTransaction } from '../sql/transaction';
import { changeOf, diffOf, movedLinkChanges, ownershipOf, type Diff } from './changes';
import { assertLinkObjectsSearchable, assertLinkObjectsValid, attributeWriteRules, resolveLinkObjects, type LinkObjectWrite } from './find-or-create';
import { assertLinks, assertOtherSide, linksMade, withHiddenLinked } from './link-rules';
import { addedLinks, changeAction, linkNamed, linkValuesAfter, type LinkDelta } from './link-delta';
import { splitLinkObjects, type LinkObjects } from './link-objects';
import { answerWrite, getRecord, planWriteAnswer, visibleRecord } from './read';
import type { Repository } from './repository';
import type { AfterCommit } from './repository-types';
import { assertWithinRules, prepareRowRules, rowRulesOf } from './row-rules';
import { sameValue } from './values';
import { matchesVersion, preconditionFailed, stillMatches, versionOf } from './version';
import { keysSetByHooks, rowChange } from './write-values';
import { assertFieldsEditable, assertRecordLevel, assertSentBody, checkFields, sentFields } from './write-rules';

/** A checked update of one record, ready to be written inside its transaction. */
interface RecordChange {
  id: string;
  existing: ApiRecord;
  access: UserAccess;
  values: Map<FieldModel, unknown>;
  /** The fields the client sent (what the link rules judge). */
  named: FieldModel[];
  objects: LinkObjects;
  /** Column conditions a before-hook expects the stored row to meet (else 409). */
  expected: Record<string, unknown>;
  attributes?: PreparedAttributeWrite;
  /** What the link rules judge: the values of the fields the client named (of a link route: the ids it adds). */
  linkValues: Map<FieldModel, unknown>;
  /** The links the update names by delta (a link route): what its change is logged as depends on them (`changeAction`). */
  deltas: readonly LinkDelta[];
  /** Whether the version the write expects is the client's (`If-Match`: 412), or the one read (read again). */
  ifMatch: boolean;
}

/** Another request wrote the record since it was read: the update is judged again on what is stored now (as after a deadlock). */
class WrittenMeanwhile extends Error {}

/**
 * Reads of a record an update makes at most while other requests keep writing it first; then
 * 409, as for a hook's `expect`. Each round lets one writer through: this many serve as many
 * writers of one record at once, and they spread out by a short random wait between rounds.
 */
const UPDATE_ATTEMPTS = 100;

/** A wait of up to `attempt` milliseconds (10 at most), at random: writers that collided try again apart. */
const spreadOut = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(attempt, 10)));

/**
 * What an update reads of the stored record: everything readable when record hooks get it as
 * `existing`; else only what the update compares (the fields the body names, as ids without
 * names), so that `{price}` costs no join and no link query.
 */
function storedFieldsToCompare(repo: Repository, body: Record<string, unknown>): { fields?: FieldModel[]; names?: false } {
  const { hooks } = repo.env;
  if (hooks.has('beforeUpdate', repo.model.name) || hooks.has('afterUpdate', repo.model.name)) return {};
  const named = new Set(['id', ...Object.keys(body ?? {})]);
  return { fields: repo.readable.filter((f) => named.has(f.key) || named.has(f.name)), names: false };
}

/**
 * A record the caller may edit: visible (404) and within the edit right (403). Of `fields` (by
 * default all readable ones) and always of the owner fields, which the edit level `own` judges.
 */
export async function editableRecord(
  repo: Repository,
  ctx: RequestContext,
  { id, fields, names }: { id: string; fields?: FieldModel[]; names?: false },
): Promise<{ existing: ApiRecord; access: UserAccess }> {
  const withOwner = fields && [...fields, ...repo.ownerFields.filter((f) => !fields.includes(f))];
  const existing = await visibleRecord(repo, ctx, { id, fields: withOwner, names });
  const { access } = await repo.guard.scope(ctx, 'edit');
  assertRecordLevel(repo.model, { ctx, access }, { record: existing, action: 'edit' });
  return { existing, access };
}

function assertSameId(input: Record<string, unknown>, id: string): void {
  if (input.id !== undefined && input.id !== id) {
    throw new ApiError('CORE_READ_ONLY_FIELD', 'id cannot be changed', {
      details: { issues: [{ path: ['id'], code: 'read_only', message: 'id cannot be changed' }] },
    });
  }
}

/**
 * The error of an update that matched no row: the row changed meanwhile under `If-Match` (412) or
 * a hook's `expect` (409), or is gone (404).
 */
async function unmatchedUpdate(repo: Repository, sql: SqlContext, { id, expected, ifMatch }: Pick<RecordChange, 'id' | 'expected' | 'ifMatch'>): Promise<Error> {
  if (Object.keys(expected).length === 0 || !(await isLive(sql, repo.model, { id }))) return notFound(repo.model.name, id);
  if (VERSION_COLUMN in expected) return ifMatch ? preconditionFailed(repo.model.name, id) : new WrittenMeanwhile();
  return new ApiError('CORE_CONFLICT', `${repo.model.name} '${id}' was changed by another request; read it again`, { details: { entity: repo.model.name, id } });
}

/** A write's preconditions: the `If-Match` and `If-None-Match` headers, as sent. */
export interface Preconditions {
  /** The versions the record must be at (412 otherwise). */
  ifMatch?: string;
  /** The versions the record must not be at, or `*` (412 while it is). */
  ifNoneMatch?: string;
}

/**
 * 412 unless the record is at a version `If-Match` names, or while it is at one `If-None-Match`
 * names (RFC 9110 §13.1.1, §13.1.2); answers the version checked (undefined without either). Called
 * once the rights and the body are judged (§13.2.1): no right is 403, and a bad body 400,
 * whatever the headers name.
 */
export function assertVersion(repo: Repository, { existing, id, ifMatch, ifNoneMatch }: Preconditions & { existing: ApiRecord; id: string }): number | undefined {
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  const version = versionOf(existing);
  if (ifMatch !== undefined && (version === undefined || !matchesVersion(ifMatch, { version, weak: false }))) throw preconditionFailed(repo.model.name, id);
  if (ifNoneMatch !== undefined && version !== undefined && matchesVersion(ifNoneMatch, { version, weak: true })) throw stillMatches(repo.model.name, id);
  return version;
}

/** Writes the changed columns of a record's row (and who changed it, and when). */
async function writeRow(repo: Repository, sql: SqlContext, change: Pick<RecordChange, 'id' | 'expected' | 'ifMatch'> & { modification: RowChange; row: Record<string, unknown> }): Promise<void> {
  const { id, expected, modification, row } = change;
  Object.assign(row, modifiedColumns(modification));
  if (!(await updateRow(sql, repo.model, { id, row, expected }))) throw await unmatchedUpdate(repo, sql, change);
}

/** The ids in one list but not the other. */
function symmetricDifference(a: readonly string[], b: readonly string[]): string[] {
  const left = new Set(a);
  const right = new Set(b);
  return [...a.filter((x) => !right.has(x)), ...b.filter((x) => !left.has(x))];
}

/**
 * Locks the record's row before the update writes anything (its attribute values, its row, its
 * links), together with the rows of the records whose links it changes, in one order for every
 * transaction (`lockLinkedRows`): two updates of one record, or two link writes of one pair of
 * records from both sides, then wait for each other instead of deadlocking. An update of simple
 * columns alone locks one row, its own, by writing it: it needs none of this. The links as read for
 * the comparison tell which records change; a list changed meanwhile may lock one too few, which
 * the deadlock retry of updateRecord covers.
 */
async function lockWritten(repo: Repository, sql: SqlContext, { change, changed }: { change: RecordChange; changed: ReadonlyMap<FieldModel, unknown> }): Promise<void> {
  if (!sql.dialect.locksRows) return;
  const { links } = toRow(sql.dialect, changed);
  if (links.length === 0 && !change.attributes) return;
  const targets = new Map<MultipleLinkField, string[]>();
  for (const [field, sent] of links) {
    const read = change.existing[field.key];
    const stored = Array.isArray(read) ? (read as string[]) : await currentLinkIds(sql, field, change.id);
    targets.set(field, symmetricDifference(stored, sent));
  }
  await lockLinkedRows(sql, { model: repo.model, id: change.id, targets });
}

/** Writes the changed columns and links of a record, inside its transaction. */
async function writeChangedRow(repo: Repository, write: LinkObjectWrite, change: Pick<RecordChange, 'id' | 'expected' | 'ifMatch' | 'access'> & { changed: Map<FieldModel, unknown> }): Promise<void> {
  const { id, changed, expected, ifMatch } = change;
  const sql = sqlContext(repo.env, write.trx);
  const { row, links } = toRow(sql.dialect, changed);
  // One modification for the record and for those whose link column its links move.
  const modification = rowChange(write.ctx);
  await writeRow(repo, sql, { id, expected, ifMatch, modification, row });
  const writer = { ctx: write.ctx, access: change.access, rows: rowRulesOf(repo, write.ctx) };
  for (const [field, sent] of links) {
    const previous = await currentLinkIds(sql, field, id);
    const ids = await withHiddenLinked(sql, writer, { field, previous, sent });
    await assertOtherSide(sql, writer, { field, previous, ids });
    await insertChanges(sql, movedLinkChanges(write.ctx, await writeMultipleLink(sql, field, { ownerId: id, ids, previous, change: modification })));
  }
}

/**
 * The change an update logs: the fields and attribute values it changed. Its owner and assignee
 * are the record's after the write, as the stream route judges the record as it is: an update
 * that hands the record to another user goes to the new one, not to the one it was taken from
 * (who may no longer read what it wrote), as upserts and mass updates log it.
 */
function updateChange(repo: Repository, ctx: RequestContext, { change, changed, diff }: { change: RecordChange; changed: ReadonlyMap<FieldModel, unknown>; diff: Diff }) {
  // The creator never changes; the assignee may (no copy of the record: this is every update's path).
  const owner = ownershipOf(change.existing);
  for (const [field, value] of changed) if (field.key === 'assignedUserId') owner.assigneeId = (value as string | null | undefined) ?? null;
  return changeOf(ctx, { entityType: repo.model.name, recordId: change.id, action: changeAction(change.deltas, diff), diff, owner });
}

/** The values of the body that differ from the stored record. */
function changedValues(change: RecordChange): Map<FieldModel, unknown> {
  const { values, existing } = change;
  return new Map([...values].filter(([field, value]) => !sameValue(field, existing[field.key], value)));
}

/**
 * What the link rules judge once link objects are resolved: a multiple link written as an array
 * may name ids beside objects (`categories: ['id', {code}]`), judged as `categoriesIds` is (the
 * ids it adds), as a create judges them.
 */
function judgedLinks(change: RecordChange): Map<FieldModel, unknown> {
  if (change.objects.size === 0) return change.linkValues;
  const resolved = [...change.objects.keys()].map((field): [FieldModel, unknown] => [field, change.values.get(field)]);
  return new Map([...change.linkValues, ...linksMade(change.existing, resolved)]);
}

/** The update inside its transaction, with its change logged; false when nothing changed (and nothing was written). */
async function writeChange(repo: Repository, write: LinkObjectWrite, change: RecordChange): Promise<boolean> {
  const { trx, ctx, after } = write;
  const sql = sqlContext(repo.env, trx);
  await resolveLinkObjects<LinkField>(repo, write, { objects: change.objects, values: change.values });
  const changed = changedValues(change);
  await lockWritten(repo, sql, { change, changed });
  // After the rows are locked in their one order: the check holds the records the links name
  // (`Hold` in link-store.ts), and two link writes of one pair from both sides would deadlock
  // otherwise.
  await assertLinks(sql, { ctx, access: change.access, rows: rowRulesOf(repo, ctx) }, judgedLinks(change));
  const attributes = await change.attributes?.apply?.(trx, change.id, attributeWriteRules(repo, ctx, after));
  if (changed.size === 0 && !attributes?.changed) return false;
  await writeChangedRow(repo, write, { id: change.id, changed, expected: change.expected, ifMatch: change.ifMatch, access: change.access });
  await assertWithinRules(repo, { sql, ctx }, change.id);
  await insertChanges(sql, [updateChange(repo, ctx, { change, changed, diff: { ...diffOf(changed, change.existing), ...attributes?.diff } })]);
  return true;
}

/**
 * An update of simple columns only (no link, link object or attribute) is one `UPDATE`, atomic on
 * its own: it runs without a transaction, which would cost two more round trips. Under row rules
 * the record is checked against them after the write, in the write's transaction.
 */
function isOneStatement(change: RecordChange, ruled: boolean): boolean {
  if (ruled || change.objects.size > 0 || change.attributes?.apply) return false;
  for (const field of change.values.keys()) if (field.type === 'link' || field.type === 'linkMultiple') return false;
  return true;
}

/**
 * The update of simple columns only and its change, in one step, which also reads the record
 * back for the answer where it can (`readBack`); not written when nothing changed.
 */
async function writeColumns(repo: Repository, ctx: RequestContext, { change, readBack }: { change: RecordChange; readBack?: ReadBack }): Promise<RowWritten> {
  const changed = changedValues(change);
  if (changed.size === 0) return { written: false };
  const { row } = toRow(repo.env.database.dialect, changed);
  Object.assign(row, modifiedColumns(rowChange(ctx)));
  const logged = updateChange(repo, ctx, { change, changed, diff: diffOf(changed, change.existing) });
  const sql = sqlContext(repo.env, repo.env.database.knex);
  const done = await updateLogged(sql, repo.model, { id: change.id, row, expected: change.expected, change: logged, readBack });
  if (!done.written) throw await unmatchedUpdate(repo, sql, change);
  return done;
}

/** The column conditions of a hook's `expect` (record keys of stored fields only). */
function expectedColumns(repo: Repository, expect: Record<string, unknown> | undefined): Record<string, unknown> {
  const { columns, notStored } = keyColumns(repo.env.database.dialect, repo.model, expect ?? {});
  if (notStored !== undefined) throw new ApiError('CORE_INTERNAL', `expect names '${notStored}', which is not a stored field of ${repo.model.name}`);
  return columns;
}

/**
 * What no update could take, whatever record it is sent to, as an update of one record answers
 * it: 400 for the body (its shape, types, unknown keys, link objects and flattened attribute
 * keys), then 403 for a field the role may not edit among those it sends and the links it
 * changes (`links`, by name); then 400 for what is inside its link objects (an update finds or
 * creates their records after the field rules), and 403 for one the caller may not search with
 * (the right to create is judged per record: it is needed only when nothing matches). What a
 * mass update checks before it starts. A multiple link that would change records of a type the
 * role may not edit is judged on each record, as an update of it judges it: sent back as
 * stored, or adding a record already linked, it changes no other record (`checkFields`).
 */
export async function assertUpdateBody(repo: Repository, ctx: RequestContext, { body, links = [] }: { body: Record<string, unknown>; links?: readonly string[] }): Promise<void> {
  const attributes = await repo.env.attributes?.prepareWrite(ctx, repo.model, body);
  const sent = attributes?.body ?? body;
  const { data, objects } = splitLinkObjects(repo.model, sent);
  const values = repo.validate(data, 'update');
  const fields = [...sentFields(values, { sent, objects: objects.keys() }), ...links.map((link) => linkNamed(repo.model, link))];
  const access = await repo.guard.access(ctx);
  assertFieldsEditable(repo.model, access, fields);
  assertLinkObjectsValid(repo, { objects, attributes: attributes?.linkObjects });
  await assertLinkObjectsSearchable(repo, ctx, { objects, attributes: attributes?.linkObjects });
}

/** An update: the record, the body, and (attribute endpoints) attribute values already planned. */
export interface RecordUpdate {
  id: string;
  body: Record<string, unknown>;
  attributes?: PreparedAttributeWrite;
  /** false: the caller needs no record back (it is read only for after-hooks). */
  answer?: false;
  /** A link route or mass update: ids added to and removed from links, beside the body. */
  links?: readonly LinkDelta[];
  /** `If-Match`: the versions the record must be at, else 412 and nothing is written. */
  ifMatch?: string;
  /** `If-None-Match`: versions the record must not be at (`*`: any), else 412 and nothing is written. */
  ifNoneMatch?: string;
}

/** `update`, telling also whether it wrote anything (upsert's `Updated` or `NotModified`). */
export async function updateRecord<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, update: RecordUpdate & { answer?: undefined }): Promise<{ record: TRecord; written: boolean }>;
export async function updateRecord<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, update: RecordUpdate): Promise<{ record?: TRecord; written: boolean }>;
export async function updateRecord<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, update: RecordUpdate): Promise<{ record?: TRecord; written: boolean }> {
  const compared = await updateInOneStatement(repo, ctx, update);
  if (compared) return compared;
  for (let attempt = 1; ; attempt++) {
    try {
      return await updateOnce(repo, ctx, update);
    } catch (error) {
      // The database may also end the transaction to break a deadlock (rows locked in another
      // order by a write that is not an update): nothing of it was stored; it is judged again.
      if (!(error instanceof WrittenMeanwhile) && !repo.env.database.dialect.isDeadlock(error)) throw error;
      if (attempt >= UPDATE_ATTEMPTS) {
        throw new ApiError('CORE_CONFLICT', `${repo.model.name} '${update.id}' was changed by another request; read it again`, { details: { entity: repo.model.name, id: update.id } });
      }
      await spreadOut(attempt);
    }
  }
}

/**
 * The values of an update that needs nothing of the stored record but the row itself, or
 * undefined: no hook, link, attribute, row rule or `If-Match`; a caller who reads and edits every
 * record of the type; a body whose fields are all simple stored columns, neither read-only,
 * write-only nor computed, which passes validation and the caller's field rights. Anything else,
 * and any refusal, is judged the usual way (`updateOnce`), in its order.
 */
async function comparableValues(repo: Repository, ctx: RequestContext, update: RecordUpdate): Promise<Map<StoredField, unknown> | undefined> {
  const { model, env } = repo;
  if (!env.database.dialect.writableCte) return undefined;
  // An id no record can have (a NUL, which PostgreSQL cannot even compare) is the 404 of the usual way.
  if (!isValidId(update.id)) return undefined;
  if (update.links?.length || update.attributes || update.ifMatch !== undefined || update.ifNoneMatch !== undefined || update.body.id !== undefined) return undefined;
  if (ctx.flattenAttributes && model.def.hasAttributes) return undefined;
  if (env.hooks.has('beforeUpdate', model.name) || env.hooks.has('afterUpdate', model.name)) return undefined;
  try {
    // The right to edit the type, as every update asks it (`assertMay`: a type the server writes
    // alone, a role without the right); then the levels that need no record.
    const { access, scope } = await repo.guard.scope(ctx, 'edit');
    if (scope.read !== 'all' || scope.edit !== 'all' || (await prepareRowRules(repo, ctx)) !== undefined) return undefined;
    const { data, objects } = splitLinkObjects(model, update.body);
    if (objects.size > 0) return undefined;
    const values = repo.validate(data, 'update');
    const simple = (f: FieldModel) => isStoredField(f) && f.type !== 'link' && !f.def.readOnly && !f.def.writeOnly && !f.def.computed;
    if (values.size === 0 || ![...values.keys()].every(simple)) return undefined;
    assertFieldsEditable(model, access, values.keys());
    return values as Map<StoredField, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * An update of simple columns compared by the database in one statement, which also logs its
 * change and reads the answer (`updateCompared`): no read of the record before it. Undefined
 * where it does not apply (`comparableValues`), or when it wrote nothing: a record missing, equal
 * in every field or written meanwhile is then updated the usual way, which tells them apart.
 */
async function updateInOneStatement<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, update: RecordUpdate): Promise<{ record?: TRecord; written: boolean } | undefined> {
  const values = await comparableValues(repo, ctx, update);
  if (!values) return undefined;
  const answer = update.answer === false ? undefined : await planWriteAnswer(repo, ctx, 'update');
  const change = rowChange(ctx);
  const sql = sqlContext(repo.env, repo.env.database.knex);
  const caller = { userId: change.userId, actorId: change.actorId, requestId: ctx.requestId ?? null, createdAt: change.at };
  const done = await repo.translated(() => updateCompared(sql, repo.model, { id: update.id, values, modified: modifiedColumns(change), caller, readBack: answer?.read.readBack }));
  if (!done?.written) return undefined;
  if (!answer) return { written: true };
  return { record: await answerWrite(repo, ctx, { plan: answer, id: update.id, read: done.read }), written: true };
}

/**
 * The stored record, with the values its computed fields show now when the body sends some back
 * (a `Sharing`'s `available`): a client may send back what it read, and such a field is read-only
 * like any other. Read as a single read shows it, only then.
 */
async function withComputed(repo: Repository, ctx: RequestContext, { id, existing, values }: { id: string; existing: ApiRecord; values: ReadonlyMap<FieldModel, unknown> }): Promise<ApiRecord> {
  const computed = [...values.keys()].filter((f) => f.def.computed);
  if (computed.length === 0) return existing;
  const shown = (await getRecord(repo, ctx, { id })) as Record<string, unknown>;
  return { ...existing, ...Object.fromEntries(computed.map((f) => [f.key, shown[f.key]])) };
}

/**
 * One attempt of an update, on the record as read now. The write holds only while the record is
 * still at the version read: the values it compares, its diff and the links it changes by delta
 * are those of that version (`WrittenMeanwhile` otherwise).
 */
async function updateOnce<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, update: RecordUpdate): Promise<{ record?: TRecord; written: boolean }> {
  const { id, links = [] } = update;
  const ruled = (await prepareRowRules(repo, ctx)) !== undefined;
  const linkKeys = Object.fromEntries(links.map((d) => [d.field.key, true]));
  const { existing, access } = await editableRecord(repo, ctx, { id, ...storedFieldsToCompare(repo, { ...update.body, ...linkKeys }) });
  const body = links.length ? { ...update.body, ...linkValuesAfter(links, existing) } : update.body;
  const attributes = update.attributes ?? (await repo.env.attributes?.prepareWrite(ctx, repo.model, body));
  const input = { ...(attributes?.body ?? body) };
  assertSameId(input, id);
  delete input.id;
  const sent = { ...input };
  if (repo.env.hooks.has('beforeUpdate', repo.model.name)) assertSentBody(repo, access, sent);
  const event: RecordHookEvent = { ctx, model: repo.model, id, data: input, existing };
  await repo.env.hooks.run('beforeUpdate', event);
  const { data, objects } = splitLinkObjects(repo.model, input);
  const values = repo.validate(data, 'update');
  const named = sentFields(values, { sent, objects: objects.keys() });
  checkFields(repo.model, access, { values, sent: named, existing: await withComputed(repo, ctx, { id, existing, values }), fromHooks: keysSetByHooks(sent, input) });
  // Preconditions are judged after the rights (RFC 9110 §13.2.1): no right is 403 whatever the version.
  const guard = assertVersion(repo, { existing, id, ifMatch: update.ifMatch, ifNoneMatch: update.ifNoneMatch }) ?? versionOf(existing);
  const expected = { ...expectedColumns(repo, event.expect), ...(guard !== undefined && { [VERSION_COLUMN]: guard }) };
  const after: AfterCommit = [];
  const delta = new Set<FieldModel>(links.map((d) => d.field));
  const linkValues = linksMade(existing, [...named.filter((f) => !delta.has(f)).map((f): [FieldModel, unknown] => [f, values.get(f)]), ...addedLinks(links)]);
  const change: RecordChange = { id, existing, access, values, named, objects, expected, attributes, linkValues, deltas: links, ifMatch: update.ifMatch !== undefined };
  const hooked = repo.env.hooks.has('afterUpdate', repo.model.name);
  const answer = update.answer === false && !hooked ? undefined : await planWriteAnswer(repo, ctx, 'update');
  const { written, read } = await repo.translated(async (): Promise<RowWritten> =>
    isOneStatement(change, ruled)
      ? writeColumns(repo, ctx, { change, readBack: answer?.read.readBack })
      : { written: await inTransaction(repo.env.database, (trx) => writeChange(repo, { trx, ctx, after }, change)) },
  );
  for (const fn of after) await fn();
  if (!answer) return { written };
  const afterHook = hooked ? (stored: ApiRecord) => repo.env.hooks.run('afterUpdate', { ctx, model: repo.model, id, record: stored, existing }) : undefined;
  const record = await answerWrite(repo, ctx, { plan: answer, id, afterHook, read });
  return { record, written };
}
