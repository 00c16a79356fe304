import type { Knex } from 'knex';
import type { FieldType } from '../declarations';
import { isStoredField, type EntityModel, type FieldModel } from '../definition/model';
import { chunks } from '../util/chunks';
import { DELIVERY_TABLE, insertDeliveries, type ActiveWebhook, type LoggedChange } from './delivery-store';
import { prepareStatement, runPrepared, runText, type Param, type PreparedStatement, type TextStatement } from './prepared';
import { guardedInsertWithMarkers, insertColumns, insertRow, insertWithMarkers, updateRow, updateShape, updateValues, updateWithMarkers, type LinkGuard } from './record-store';
import { changesWritten, transactionOn } from './transaction';
import { insertSelect } from './insert-select';
import type { AuxiliaryTable } from './schema-sync';
import type { Dialect, InsertLogging, RowShape } from './dialects/dialect';
import type { ChangeKind } from './change-routing';
import type { SqlContext } from './sql-context';

/**
 * The change log (CONTRACT §16): one row per change of one record, written in the transaction of
 * the write. `seq` is numbered by the database and grows with every change, across processes.
 */
export const CHANGE_TABLE: AuxiliaryTable = {
  name: 'record_change',
  sequence: 'seq',
  columns: {
    entity_type: 'varchar(64) not null',
    record_id: 'varchar(64) not null',
    action: 'varchar(16) not null',
    diff: 'text not null',
    user_id: 'varchar(64)',
    actor_id: 'varchar(64)',
    request_id: 'varchar(128)',
    // Whose record it was when it changed: what a reader's `own` level is judged by.
    owner_id: 'varchar(64)',
    assignee_id: 'varchar(64)',
    created_at: 'varchar(19) not null',
  },
  primaryKey: ['seq'],
  // No index on created_at: the retention sweep walks the oldest changes by seq (purgeChanges),
  // and one more index would cost every logged change its upkeep.
  indexes: [{ name: 'ix_record_change_record', columns: ['entity_type', 'record_id', 'seq'] }],
};

export type ChangeAction = 'Create' | 'Update' | 'Delete' | 'Restore' | 'Relate' | 'Unrelate';

/** One change as written: the diff as `{field: {was, became}}`. */
export interface NewChange {
  entityType: string;
  recordId: string;
  action: ChangeAction;
  diff: Record<string, { was: unknown; became: unknown }>;
  userId: string | null;
  actorId: string | null;
  requestId: string | null;
  ownerId: string | null;
  assigneeId: string | null;
  createdAt: string;
}

/** One change as read back. */
export interface StoredChange extends NewChange {
  seq: number;
}

/** The columns of a change, in the order statements write them. */
export const CHANGE_COLUMNS = ['entity_type', 'record_id', 'action', 'diff', 'user_id', 'actor_id', 'request_id', 'owner_id', 'assignee_id', 'created_at'];

/** Changes as a recordset: the diff given as the object itself. */
const CHANGE_ROWS: RowShape = { table: 'record_change', columns: CHANGE_COLUMNS, jsonColumns: ['diff'] };

/**
 * A change as a row. Its diff goes as JSON text in a row of its own, and as the object itself in
 * a recordset, which stores its text (on PostgreSQL the batch's JSON document holds the object:
 * encoded once, not as a string inside a string).
 */
const toRow = (c: NewChange, { diffAsText = true } = {}): Record<string, unknown> => ({
  entity_type: c.entityType,
  record_id: c.recordId,
  action: c.action,
  diff: diffAsText ? JSON.stringify(c.diff) : c.diff,
  user_id: c.userId,
  actor_id: c.actorId,
  request_id: c.requestId,
  owner_id: c.ownerId,
  assignee_id: c.assigneeId,
  created_at: c.createdAt,
});

const inRecordset = (c: NewChange) => toRow(c, { diffAsText: false });

const fromRow = (row: Record<string, unknown>): StoredChange => ({
  seq: Number(row.seq),
  entityType: row.entity_type as string,
  recordId: row.record_id as string,
  action: row.action as ChangeAction,
  diff: JSON.parse(row.diff as string) as StoredChange['diff'],
  userId: (row.user_id as string | null) ?? null,
  actorId: (row.actor_id as string | null) ?? null,
  requestId: (row.request_id as string | null) ?? null,
  ownerId: (row.owner_id as string | null) ?? null,
  assigneeId: (row.assignee_id as string | null) ?? null,
  createdAt: row.created_at as string,
});

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Columns a batch's changes often share: one entity type, caller, request and time, mostly one
 * action and owner (bound once when all changes of the statement hold the same value).
 */
const SHAREABLE = CHANGE_COLUMNS.filter((c) => c !== 'record_id' && c !== 'diff');

/** The insert of many changes (those of one upsert of new records differ only in record and diff). */
function changeInsert(dialect: Dialect, changes: readonly NewChange[], returning = ''): TextStatement & { bindings: unknown[] } {
  const insert = insertSelect(dialect, changes.map(inRecordset), { shape: CHANGE_ROWS, shareable: SHAREABLE });
  return { method: returning ? 'rows' : 'count', key: `changes:${insert.key}:${returning}`, text: () => `${insert.text()}${returning}`, bindings: insert.bindings };
}

/** Changes with the statements that insert them made: built while the caller waits for the database. */
export interface ReadyChanges {
  readonly changes: readonly NewChange[];
  readonly inserts: readonly (TextStatement & { bindings: unknown[] })[];
}

/** Makes the statements that insert `changes` (one per recordset); a single change goes as a row of its own. */
export function readyChanges(dialect: Dialect, changes: readonly NewChange[]): ReadyChanges {
  const inserts = changes.length > 1 ? chunks(changes, dialect.recordsetRows(CHANGE_COLUMNS.length)).map((part) => changeInsert(dialect, part)) : [];
  return { changes, inserts };
}

/**
 * Writes changes in the caller's transaction, set-based: one statement per recordset (5,000
 * changes; on SQLite as many as its limit of parameters allows), whatever their number. Takes the
 * changes, or the changes made ready beforehand (`readyChanges`).
 */
export async function insertChanges(sql: SqlContext, given: readonly NewChange[] | ReadyChanges): Promise<void> {
  const ready = 'inserts' in given ? given : undefined;
  const changes = ready?.changes ?? (given as readonly NewChange[]);
  if (changes.length === 0) return;
  const { db, dialect } = sql;
  // Only when an active webhook wants one of them do the changes go anywhere else.
  const targets = await sql.routing?.targets(db, changes);
  if (targets && !(db as Knex.Transaction).isTransaction) return transactionOn(db as Knex, (trx) => insertChanges({ ...sql, db: trx }, changes));
  let deliveries = 0;
  if (targets) {
    const logged: LoggedChange[] = [];
    for (const part of chunks(changes, dialect.recordsetRows(CHANGE_COLUMNS.length))) logged.push(...(await insertReturning(sql, part)));
    deliveries = await insertDeliveries(sql, { changes: logged, targets });
  } else if (changes.length === 1) {
    await insertRow(sql, { table: CHANGE_TABLE.name }, toRow(changes[0]));
  } else {
    for (const insert of (ready ?? readyChanges(dialect, changes)).inserts) await runText(sql, insert, insert.bindings);
  }
  changesWritten(db);
  sql.routing?.written(db, { changes, deliveries });
}

/** Inserts changes and answers their seq with what decides where they go. */
async function insertReturning(sql: SqlContext, changes: readonly NewChange[]): Promise<LoggedChange[]> {
  const insert = changeInsert(sql.dialect, changes, ' returning seq, entity_type, record_id, action');
  const rows = await runText<Record<string, unknown>[]>(sql, insert, insert.bindings);
  return rows.map((r) => ({ seq: Number(r.seq), entityType: r.entity_type as string, recordId: r.record_id as string, action: r.action as string }));
}

/**
 * The select of a written record that the write's own statement runs (`insertLogged`,
 * `updateLogged`): the same select as a read of the record by id, over the row the write answers
 * (`returning *`, named `source`) in place of the table, so that the answer of a write costs no
 * statement of its own.
 */
export interface ReadBack {
  /** What tells this select from others among compiled statements. */
  readonly key: string;
  /** The select, with `param('id')` for the record's id. */
  select(param: Param, source: string): Knex.QueryBuilder;
}

/** What a write of one row did: whether it wrote, and the record read back by its statement (see `ReadBack`). */
export interface RowWritten {
  written: boolean;
  /** The rows of the `ReadBack` given: none when the write went another way (the caller reads the record itself). */
  read?: Record<string, unknown>[];
}

/**
 * Updates one live record's row and logs its change in one atomic step: one statement where the
 * database can (PostgreSQL) and no webhook wants the change, else a transaction. Answers whether
 * a row was updated (and logged), and the record as `readBack` reads it when that statement did.
 */
export async function updateLogged(
  sql: SqlContext<Knex>,
  model: EntityModel,
  { id, row, expected, change, readBack }: { id: string; row: Record<string, unknown>; expected: Record<string, unknown>; change: NewChange; readBack?: ReadBack },
): Promise<RowWritten> {
  const { db, dialect } = sql;
  const update = { id, row, expected };
  const shape = updateShape(model, update);
  if (!dialect.writableCte || !shape || (await sql.routing?.targets(db, [change]))) {
    return transactionOn(db, async (trx) => {
      if (!(await updateRow({ ...sql, db: trx }, model, update))) return { written: false };
      await insertChanges({ ...sql, db: trx }, [change]);
      return { written: true };
    });
  }
  // One statement compiled per table, set of columns and read.
  const statement = sql.statements.get(`updateLogged:${shape.key}${readBack ? `>${readBack.key}` : ''}`, () =>
    withChangeOf(sql, (param) => updateWithMarkers(sql, model, { shape, param }), readBack),
  );
  const rows = await runPrepared<Record<string, unknown>[]>(sql, statement, withChangeValues(updateValues(update, shape), change));
  const written = rows.length > 0;
  if (written) afterLogged(sql, change);
  return { written, read: readBack && rows };
}

/**
 * Inserts one record's row and logs its change in one atomic step: one statement where the
 * database can (PostgreSQL) and no webhook wants the change, else a transaction. A create of
 * simple columns and single links thus costs one round trip, as an update of simple columns does
 * (`updateLogged`). With `guards`, the row is inserted only when its guarded links name live
 * records (`guardedInsertWithMarkers`): not written otherwise, nor when a value of the row cannot
 * be bound as it is (the caller checks the links and inserts without guards then). Answers the
 * record as `readBack` reads it when that statement did.
 */
export async function insertLogged(
  sql: SqlContext<Knex>,
  model: EntityModel,
  { row, change, readBack, guards = [] }: { row: Record<string, unknown>; change: NewChange; readBack?: ReadBack; guards?: readonly LinkGuard[] },
): Promise<RowWritten> {
  const { db, dialect } = sql;
  const columns = insertColumns(row);
  if (!columns) {
    // Values that cannot be bound as they are: no compiled statement, no guard (not written with guards).
    if (guards.length) return { written: false };
    await transactionOn(db, async (trx) => {
      await insertRow({ ...sql, db: trx }, model, row);
      await insertChanges({ ...sql, db: trx }, [change]);
    });
    return { written: true };
  }
  const insert = (param: Param) => (guards.length ? guardedInsertWithMarkers(sql, model, { columns, param, guards }) : insertWithMarkers(sql, model, { columns, param }));
  const key = `${model.table}:${columns.join(',')}${guards.length ? `?${guards.map((g) => g.column).join(',')}` : ''}`;
  if (!dialect.writableCte || (await sql.routing?.targets(db, [change]))) {
    return transactionOn(db, async (trx) => {
      const statement = sql.statements.get(`insert:${key}`, () => prepareStatement('count', insert));
      if ((await runPrepared<number>({ ...sql, db: trx }, statement, row)) === 0) return { written: false };
      await insertChanges({ ...sql, db: trx }, [change]);
      return { written: true };
    });
  }
  // One statement compiled per table, set of columns, guards and read.
  const statement = sql.statements.get(`insertLogged:${key}${readBack ? `>${readBack.key}` : ''}`, () => withChangeOf(sql, insert, readBack));
  const rows = await runPrepared<Record<string, unknown>[]>(sql, statement, withChangeValues({ ...row }, change));
  const written = rows.length > 0;
  if (written) afterLogged(sql, change);
  return { written, read: readBack && rows };
}

/**
 * A write of one row and the insert of its change, as one statement: the change is logged only
 * when the row was written. Its values are named `change:<column>` (see `withChangeValues`). It
 * answers a row per row written: its change's `seq`, or with `readBack` the record as that reads
 * it (PostgreSQL runs every part of a `with` on the snapshot before the statement: the record is
 * read from the row the write answers, never from its table).
 */
function withChangeOf(sql: SqlContext<Knex>, write: (param: Param) => Knex.QueryBuilder | Knex.Raw, readBack?: ReadBack): PreparedStatement {
  return prepareStatement('rows', (param) => {
    const written = write(param).toSQL();
    const returning = readBack ? 'returning *' : `returning ${q('id')}`;
    const log = `insert into ${q(CHANGE_TABLE.name)} (${CHANGE_COLUMNS.map(q).join(', ')}) select ${CHANGE_COLUMNS.map(() => '?').join(', ')} from w`;
    const bindings = [...written.bindings, ...CHANGE_COLUMNS.map((c) => param(`change:${c}`))] as Knex.RawBinding[];
    if (!readBack) return sql.db.raw(`with w as (${written.sql} ${returning}) ${log} returning seq`, bindings);
    const read = readBack.select(param, 'w').toSQL();
    return sql.db.raw(`with w as (${written.sql} ${returning}), c as (${log}) ${read.sql}`, [...bindings, ...read.bindings] as Knex.RawBinding[]);
  });
}

/** The names of a change's values in a `withChangeOf` statement, made once (not per request). */
const CHANGE_VALUE_NAMES = CHANGE_COLUMNS.map((c) => `change:${c}`);

/** The values of a `withChangeOf` statement: the write's, and the change's by column. */
function withChangeValues(values: Record<string, unknown>, change: NewChange): Record<string, unknown> {
  const row = toRow(change);
  for (let i = 0; i < CHANGE_COLUMNS.length; i++) values[CHANGE_VALUE_NAMES[i]] = row[CHANGE_COLUMNS[i]];
  return values;
}

/** What follows a change logged outside `insertChanges`, as it follows one logged there: listeners woken, the routing told (a written Webhook drops the routing's list). */
export function afterLogged(sql: SqlContext, change: ChangeKind): void {
  changesWritten(sql.db);
  sql.routing?.written(sql.db, { changes: [change], deliveries: 0 });
}

/** The most fields a diff built by the database takes (an update's diff is one `concat_ws` of them, which takes at most 100 arguments). */
export const MAX_BUILT_FIELDS = 50;

/** Part of a JSON text PostgreSQL makes: literal text, or an expression whose value goes as JSON. */
export type JsonTextPart = { literal: string } | { value: string };

/**
 * The expression of a JSON text made of `parts`: the literal text joined with each value's JSON
 * (`to_json`, `null` for NULL), adjacent literals as one. It costs the database about half what
 * the same objects made with `json_build_object` cost.
 */
export function jsonTextOf(parts: readonly JsonTextPart[]): string {
  const terms: string[] = [];
  let literal = '';
  const endLiteral = () => {
    if (literal) terms.push(`'${literal.replaceAll("'", "''")}'`);
    literal = '';
  };
  for (const part of parts) {
    if ('literal' in part) literal += part.literal;
    else {
      endLiteral();
      terms.push(`coalesce(to_json(${part.value})::text, 'null')`);
    }
  }
  endLiteral();
  return terms.join(' || ');
}

/** The parts of one field of a diff, `"key":{"was":<was>,"became":<became>}`; `was` undefined for a created record (`null`). */
export function diffEntryParts(key: string, was: string | undefined, became: string): JsonTextPart[] {
  const head = `${JSON.stringify(key)}:{"was":`;
  const wasParts: JsonTextPart[] = was === undefined ? [{ literal: `${head}null` }] : [{ literal: head }, { value: was }];
  return [...wasParts, { literal: ',"became":' }, { value: became }, { literal: '}' }];
}

/** An insert of new records that also logs their `Create` changes (see `createsLoggedByInsert`). */
export interface LoggingInsert extends InsertLogging {
  /** What follows the changes once the insert stored them (as `insertChanges` does). */
  written(): void;
}

/**
 * The `Create` changes of new records of `model`, logged by the statement that inserts them, as
 * the floor of a batch does: `with p as (<insert> returning *) insert into record_change … from p`,
 * each diff built by the database from the row it stored: `{field: {was: null, became: column}}`
 * for `fields`, in their order (the fields every new record sets, with the defaults). The process
 * then makes no diff, no change and no JSON of them. Undefined where the changes go the usual way:
 * no writable CTE (SQLite), a field without a column of its own (a multiple link, whose `was` is
 * the empty set: `diffOf`), a field whose column is not turned into JSON as the API shows it
 * (`Dialect.jsonAsShown`), or an active webhook that wants such changes (its deliveries are
 * inserted with them, `insertChanges`).
 */
export async function createsLoggedByInsert(
  sql: SqlContext,
  model: EntityModel,
  { fields, caller }: { fields: readonly FieldModel[]; caller: Pick<NewChange, 'userId' | 'actorId' | 'requestId' | 'createdAt'> },
): Promise<LoggingInsert | undefined> {
  const { dialect } = sql;
  if (!dialect.writableCte || fields.length > MAX_BUILT_FIELDS) return undefined;
  if (!fields.every((f) => isStoredField(f) && dialect.jsonAsShown.has(f.type as FieldType))) return undefined;
  const kind: ChangeKind = { entityType: model.name, action: 'Create' };
  if (await sql.routing?.targets(sql.db, [kind])) return undefined;
  const entries = fields.flatMap((f, i) => [...(i ? [{ literal: ',' }] : []), ...diffEntryParts(f.key, undefined, `p.${q(f.column as string)}`)]);
  const diff = jsonTextOf([{ literal: '{' }, ...entries, { literal: '}' }]);
  return {
    wrap: (insert) => `with p as (${insert} returning *) ${logWrittenRows(model, { source: 'p', diff })}`,
    bindings: [model.name, 'Create', caller.userId, caller.actorId, caller.requestId, caller.createdAt],
    written: () => afterLogged(sql, kind),
  };
}

/**
 * The insert of a change per row that a part of the statement's `with` wrote (`source`): the
 * record's id, owner and assignee taken from the row, `diff` an expression of it, the other
 * columns bound, in this order: entity type, action, user, actor, request, time.
 */
export function logWrittenRows(model: EntityModel, { source, diff }: { source: string; diff: string }): string {
  const assignee = model.field.get('assignedUser')?.column;
  const values: Record<string, string> = {
    entity_type: '?',
    record_id: `${source}.id`,
    action: '?',
    diff,
    user_id: '?',
    actor_id: '?',
    request_id: '?',
    owner_id: `${source}.created_by_id`,
    assignee_id: assignee ? `${source}.${q(assignee)}` : 'null',
    created_at: '?',
  };
  return `insert into ${q(CHANGE_TABLE.name)} (${CHANGE_COLUMNS.map(q).join(', ')}) select ${CHANGE_COLUMNS.map((c) => values[c]).join(', ')} from ${source}`;
}

/** The changes some deliveries carry, by seq (one the retention removed is missing). */
export async function changesBySeq(sql: SqlContext, seqs: readonly number[]): Promise<Map<number, StoredChange>> {
  const rows = await sql.db(CHANGE_TABLE.name).select('*').whereIn('seq', [...new Set(seqs)]);
  return new Map(rows.map((row: Record<string, unknown>) => [Number(row.seq), fromRow(row)]));
}

/** The webhooks whose changes were logged at `since` (a time of the log) or later, with the seq of the last change of each. */
export async function webhooksChangedSince(sql: SqlContext, since: string): Promise<Map<string, number>> {
  const rows = await sql.db(CHANGE_TABLE.name).select('record_id').max({ seq: 'seq' }).where({ entity_type: 'Webhook' }).andWhere('created_at', '>=', since).groupBy('record_id');
  return new Map(rows.map((row: Record<string, unknown>) => [row.record_id as string, Number(row.seq)]));
}

/** How many missed changes one statement reads. */
const MISSED_PAGE = 1000;

/**
 * Writes the deliveries `webhook` lacks for the changes it wants that were logged after its own
 * change `after`: a process that had not yet heard of the webhook routed them without it. Those
 * another process wrote meanwhile are kept (see `insertDeliveries`). Answers how many it offered.
 */
export async function insertMissedDeliveries(sql: SqlContext, { webhook, after }: { webhook: ActiveWebhook; after: number }): Promise<number> {
  let offered = 0;
  for (let from = after; ; ) {
    const query = sql
      .db(CHANGE_TABLE.name)
      .select('seq', 'entity_type', 'record_id', 'action')
      .where('seq', '>', from)
      .whereNotExists((delivered) => delivered.select(sql.db.raw('1')).from(`${DELIVERY_TABLE} as d`).where('d.webhook_id', webhook.id).andWhere('d.seq', sql.db.ref(`${CHANGE_TABLE.name}.seq`)))
      .orderBy('seq')
      .limit(MISSED_PAGE);
    if (webhook.entityTypes) void query.whereIn('entity_type', [...webhook.entityTypes]);
    if (webhook.actions) void query.whereIn('action', [...webhook.actions]);
    const rows: Record<string, unknown>[] = await query;
    const changes = rows.map((r) => ({ seq: Number(r.seq), entityType: r.entity_type as string, recordId: r.record_id as string, action: r.action as string }));
    if (changes.length > 0) offered += await insertDeliveries(sql, { changes, targets: () => [webhook.id], again: true });
    if (changes.length < MISSED_PAGE) return offered;
    from = changes[changes.length - 1].seq;
  }
}

/**
 * A record's changes, newest first, and their number: from its last `Create` on. A client may
 * give a new record the id of one removed for good (`permanently: true`), whose changes stay in
 * the log for event replays and webhooks; they are another record's, which the reader of this
 * one may never have been allowed to read.
 */
export async function recordChanges(
  sql: SqlContext,
  { entityType, recordId, offset, limit }: { entityType: string; recordId: string; offset: number; limit: number },
): Promise<{ total: number; list: StoredChange[] }> {
  const created = (await sql.db(CHANGE_TABLE.name).max({ seq: 'seq' }).where({ entity_type: entityType, record_id: recordId, action: 'Create' }).first()) as { seq?: number | string | null } | undefined;
  const since = Number(created?.seq ?? 0);
  const table = () => sql.db(CHANGE_TABLE.name).where({ entity_type: entityType, record_id: recordId }).andWhere('seq', '>=', since);
  const [{ total }] = await table().count({ total: '*' });
  const rows = Number(total) === 0 || limit === 0 ? [] : await table().select('*').orderBy('seq', 'desc').offset(offset).limit(limit);
  return { total: Number(total), list: rows.map(fromRow) };
}

/** Changes after `seq`, oldest first (at most `limit`), optionally of some entity types. */
export async function changesAfter(sql: SqlContext, { seq, limit }: { seq: number; limit: number }): Promise<StoredChange[]> {
  const rows = await sql.db(CHANGE_TABLE.name).comment(FEED_COMMENT).select('*').where('seq', '>', seq).orderBy('seq').limit(limit);
  return rows.map(fromRow);
}

/** Marks the reads of the change feed, which run beside the requests (seen in the database's activity). */
export const FEED_COMMENT = 'entity-records change feed';

/**
 * The transactions writing changes now, by virtual transaction id: on PostgreSQL those holding
 * the row-exclusive lock on the log, which an insert takes before it numbers its rows and keeps
 * until its transaction ends. Undefined where the database cannot tell (SQLite, whose writes go
 * one at a time, in `seq` order).
 */
export async function changeWriters(sql: SqlContext): Promise<Set<string> | undefined> {
  if (sql.dialect.name !== 'postgres') return undefined;
  const result = (await sql.db.raw(
    `/* ${FEED_COMMENT} */ select virtualtransaction as vxid from pg_locks where locktype = 'relation' and database = (select oid from pg_database where datname = current_database()) and relation = to_regclass(?) and mode = 'RowExclusiveLock' and granted`,
    [CHANGE_TABLE.name],
  )) as { rows: { vxid: string }[] };
  return new Set(result.rows.map((r) => r.vxid));
}

/** The highest seq written so far (0 without changes). */
export async function lastSeq(sql: SqlContext): Promise<number> {
  const row = await sql.db(CHANGE_TABLE.name).comment(FEED_COMMENT).max({ seq: 'seq' }).first();
  return Number(row?.seq ?? 0);
}

/** When a record last changed (`YYYY-MM-DD HH:MM:SS`), or undefined when none is logged. */
export async function lastRecordChange(sql: SqlContext, of: { entityType: string; recordId: string }): Promise<{ at: string; seq: number } | undefined> {
  const row = (await sql.db(CHANGE_TABLE.name).select('created_at', 'seq').where({ entity_type: of.entityType, record_id: of.recordId }).orderBy('seq', 'desc').limit(1))[0] as
    | { created_at: string; seq: number | string }
    | undefined;
  return row && { at: row.created_at, seq: Number(row.seq) };
}

/** When the last change of anything was made; undefined without one. */
export async function lastChangeAt(sql: SqlContext): Promise<string | undefined> {
  const row = (await sql.db(CHANGE_TABLE.name).select('created_at').orderBy('seq', 'desc').limit(1))[0] as { created_at?: string } | undefined;
  return row?.created_at;
}

/** Changes the retention sweep looks at per statement. */
const PURGE_BATCH = 5000;

/**
 * Removes the changes made before `before` (`YYYY-MM-DD HH:MM:SS`); answers how many. The oldest
 * changes come first in `seq`: each round reads the seq and time of the oldest few thousand through
 * the primary key and deletes those old enough, so the sweep never scans the whole log.
 */
export async function purgeChanges(sql: SqlContext, before: string): Promise<number> {
  const table = () => sql.db(CHANGE_TABLE.name);
  let purged = 0;
  for (;;) {
    const oldest: { seq: number | string; created_at: string }[] = await table().select('seq', 'created_at').orderBy('seq').limit(PURGE_BATCH);
    const old = oldest.filter((row) => row.created_at < before);
    if (old.length === 0) return purged;
    purged += await table()
      .where('seq', '<=', Number(old[old.length - 1].seq))
      .where('created_at', '<', before)
      .delete();
    if (old.length < PURGE_BATCH) return purged;
  }
}
