import type { UserAccess } from '../auth/access-control';
import type { PreparedAttributeWrite } from '../attributes/record-attributes';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { FieldModel } from '../definition/normalize';
import { ApiError, notFound } from '../errors';
import type { RecordHookEvent } from '../hooks';
import type { Connection } from './database';
import { linkObjectResolver, resolveLinkObjects, type LinkObjectWrite } from './link-objects';
import { assertOptionsInList, splitLinkObjects, type LinkObjects } from './link-resolver';
import { assertLinkTargets, currentLinkIds, writeMultipleLink } from './link-writes';
import { live } from './read-query';
import { answerWrite, visibleRecord } from './read-records';
import { sameValue } from './record-guard';
import type { Repository } from './repository';
import type { AfterCommit } from './repository-types';
import { sqlContext } from './sql-context';
import { assertWritable, expectedColumns, keysSetByHooks, modifiedBy, toRow } from './write-values';

/** A checked update of one record, ready to be written inside its transaction. */
interface RecordChange {
  id: string;
  existing: ApiRecord;
  access: UserAccess;
  values: Map<FieldModel, unknown>;
  objects: LinkObjects;
  /** Column conditions a before-hook expects the stored row to meet (else 409). */
  expected: Record<string, unknown>;
  attributes?: PreparedAttributeWrite;
}

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
  const { access, scope } = await repo.guard.scope(ctx, 'edit');
  repo.guard.assertLevel(ctx, existing, { level: scope.edit, action: 'edit' });
  return { existing, access };
}

function assertSameId(input: Record<string, unknown>, id: string): void {
  if (input.id !== undefined && input.id !== id) {
    throw new ApiError('CORE_READ_ONLY_FIELD', 'id cannot be changed', {
      details: { issues: [{ path: ['id'], code: 'read_only', message: 'id cannot be changed' }] },
    });
  }
}

/** The error of an update that matched no row: the row changed under a hook's `expect` (409), or is gone (404). */
async function unmatchedUpdate(repo: Repository, db: Connection, { id, expected }: Pick<RecordChange, 'id' | 'expected'>): Promise<ApiError> {
  const { dialect } = repo.env.database;
  const stillThere = Object.keys(expected).length > 0 && (await db(repo.model.table).first('id').where({ id, deleted: live(dialect) }));
  if (stillThere) return new ApiError('CORE_CONFLICT', `${repo.model.name} '${id}' was changed by another request; read it again`, { details: { entity: repo.model.name, id } });
  return notFound(repo.model.name, id);
}

/** Writes the changed columns of a record's row (and who changed it, and when). */
async function updateRow(repo: Repository, db: Connection, change: Pick<RecordChange, 'id' | 'expected'> & { ctx: RequestContext; row: Record<string, unknown> }): Promise<void> {
  const { id, expected, ctx, row } = change;
  Object.assign(row, modifiedBy(ctx));
  const count = await db(repo.model.table).update(row).where({ ...expected, id, deleted: live(repo.env.database.dialect) });
  if (count === 0) throw await unmatchedUpdate(repo, db, change);
}

/** Writes the changed columns and links of a record, inside its transaction. */
async function writeChangedRow(repo: Repository, write: LinkObjectWrite, change: Pick<RecordChange, 'id' | 'expected'> & { changed: Map<FieldModel, unknown> }): Promise<void> {
  const { trx, ctx } = write;
  const { id, changed, expected } = change;
  const sql = sqlContext(repo.env, trx);
  const { row, links } = toRow(sql.dialect, changed);
  await assertLinkTargets(sql, changed);
  await assertOptionsInList(sql, changed);
  await updateRow(repo, trx, { id, expected, ctx, row });
  for (const [field, ids] of links) {
    const previous = await currentLinkIds(sql, field, id);
    await writeMultipleLink(sql, field, { ownerId: id, ids, previous });
  }
}

/** The values of the body that differ from the stored record; 403 for a field the caller may not edit. */
function changedValues(repo: Repository, change: RecordChange): Map<FieldModel, unknown> {
  const { values, existing } = change;
  repo.guard.assertEditable(change.access, values, existing);
  return new Map([...values].filter(([field, value]) => !sameValue(field, existing[field.key], value)));
}

/** The update inside its transaction; false when nothing changed (and nothing was written). */
async function writeChange(repo: Repository, write: LinkObjectWrite, change: RecordChange): Promise<boolean> {
  const { trx, ctx, after } = write;
  await resolveLinkObjects(repo, write, { objects: change.objects, values: change.values });
  const changed = changedValues(repo, change);
  const attributesChanged = (await change.attributes?.apply?.(trx, change.id, linkObjectResolver(repo, ctx, after))) ?? false;
  if (changed.size === 0 && !attributesChanged) return false;
  await writeChangedRow(repo, write, { id: change.id, changed, expected: change.expected });
  return true;
}

/**
 * An update of simple columns only (no link, link object or attribute) is one `UPDATE`, atomic on
 * its own: it runs without a transaction, which would cost two more round trips.
 */
function isOneStatement(change: RecordChange): boolean {
  if (change.objects.size > 0 || change.attributes?.apply) return false;
  for (const field of change.values.keys()) if (field.type === 'link' || field.type === 'linkMultiple') return false;
  return true;
}

/** The update of simple columns only, as one statement; false when nothing changed. */
async function writeColumns(repo: Repository, ctx: RequestContext, change: RecordChange): Promise<boolean> {
  const changed = changedValues(repo, change);
  if (changed.size === 0) return false;
  const { row } = toRow(repo.env.database.dialect, changed);
  await updateRow(repo, repo.env.database.knex, { id: change.id, expected: change.expected, ctx, row });
  return true;
}

/** `update`, telling also whether it wrote anything (upsert's `Updated` or `NotModified`). */
export async function updateRecord<TRecord extends ApiRecord>(
  repo: Repository<TRecord>,
  ctx: RequestContext,
  { id, body }: { id: string; body: Record<string, unknown> },
): Promise<{ record: TRecord; written: boolean }> {
  const { existing, access } = await editableRecord(repo, ctx, { id, ...storedFieldsToCompare(repo, body) });
  const attributes = await repo.env.attributes?.prepareWrite(ctx, repo.model, body);
  const input = { ...(attributes?.body ?? body) };
  assertSameId(input, id);
  delete input.id;
  const sent = { ...input };
  const event: RecordHookEvent = { ctx, model: repo.model, id, data: input, existing };
  await repo.env.hooks.run('beforeUpdate', event);
  const expected = expectedColumns(repo, event.expect);
  const { data, objects } = splitLinkObjects(repo.model, input);
  const values = repo.validate(data, 'update');
  assertWritable(values, existing, keysSetByHooks(sent, input));
  for (const field of objects.keys()) repo.guard.assertEditable(access, new Map([[field, null]]), undefined);
  const after: AfterCommit = [];
  const change: RecordChange = { id, existing, access, values, objects, expected, attributes };
  const written = await repo.translated(() =>
    isOneStatement(change) ? writeColumns(repo, ctx, change) : repo.env.database.knex.transaction((trx) => writeChange(repo, { trx, ctx, after }, change)),
  );
  for (const fn of after) await fn();
  const afterHook = (stored: ApiRecord) => repo.env.hooks.run('afterUpdate', { ctx, model: repo.model, id, record: stored, existing });
  const record = await answerWrite(repo, ctx, { kind: 'update', id, afterHook });
  return { record, written };
}
