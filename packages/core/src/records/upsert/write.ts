import type { RequestContext } from '../../context';
import { isStoredField, type EntityModel } from '../../definition/model';
import { ApiError } from '../../errors';
import { replaceJoinRows, startInsertRows, updateRows } from '../../sql/bulk-writes';
import type { Transaction } from '../../sql/database';
import { KeyTakenMeanwhile } from '../../sql/dialects/dialect';
import { writeMultipleLink } from '../../sql/link-store';
import { createsLoggedByInsert, insertChanges, readyChanges, type ChangeAction, type LoggingInsert, type NewChange } from '../../sql/change-store';
import { insertRow } from '../../sql/record-store';
import { sqlContext } from '../../sql/sql-context';
import { savepoint } from '../../sql/transaction';
import { fetchByKeys, fetchMultipleLinks, keyLookups, storedVersion, toStoredRow } from '../../sql/upsert-io';
import { VERSION_COLUMN } from '../../sql/schema-sync';
import { nowDateTime } from '../../time';
import { changeOf, isLogged, itemDiff, mergedDiff, movedLinkChanges, ownershipOf, type Diff } from '../changes';
import { changeAction, type LinkDelta } from '../link-delta';
import { assertOtherSide, withHiddenLinked } from '../link-rules';
import { editsAll, judgedOnOtherSide } from '../counterparts';
import { rowRulesOf } from '../row-rules';
import { rowChange } from '../write-values';
import type { Repository } from '../repository';
import { ChangedMeanwhile, type Prepared, type RecordState } from './plan';

/** The row a record of the batch is stored as. */
const storedRow = (repo: Repository, state: RecordState) => toStoredRow(repo.env.database.dialect, { model: repo.model, record: state.record });

/** Why an item failed: an API error as it is, else a generic one (no driver details leak). */
export const failureOf = (error: unknown): ApiError => (error instanceof ApiError ? error : new ApiError('CORE_INTERNAL', 'The item could not be stored', { cause: error }));

/** The write of a run's decided items: its transaction, repository and caller, and the records that failed so far. */
interface DecidedWrite {
  trx: Transaction;
  repo: Repository;
  ctx: RequestContext;
  failures: Map<RecordState, ApiError>;
  /** Links every item changes by delta (mass updates): a change of links only is a `Relate` or `Unrelate`. */
  deltas: readonly LinkDelta[];
  /**
   * An unlocked try (`guess` or `read`, see run.ts): a new record whose key is stored (by another
   * request meanwhile, or before a guessed segment began) fails the transaction
   * (`ChangedMeanwhile`) instead of being recovered inside it, which would cost the insert a
   * savepoint on PostgreSQL. The segment is then tried again; the locked try recovers such records.
   */
  optimistic: boolean;
}

/**
 * The keys to fetch a record again by after losing an insert race: the id when the creating
 * item named one (lookup by id only), else its unique fields and indexes.
 */
function lookupsOf(model: EntityModel, record: Record<string, unknown>, byId: boolean) {
  if (byId) return keyLookups(model, [{ id: record.id as string, values: new Map() }]);
  return keyLookups(model, [{ values: new Map(model.fields.filter((f) => f.key in record).map((f) => [f, record[f.key]])) }]);
}

/**
 * A new record whose insert was ignored. When another request stored a record with its key
 * first, the segment is decided again (`ChangedMeanwhile`, on locked records): its items then
 * find that record and are judged as the updates they are (the right to edit it, its `own` level,
 * its field rules, who modified it and when), in item order with the rest of the segment. When no
 * record holds its keys, the insert failed for another reason, which is found out by inserting
 * it alone (the record's items fail with it).
 */
async function recoverLostInsert(write: DecidedWrite, state: RecordState, items: readonly Prepared[]): Promise<void> {
  const { trx, repo, failures } = write;
  const sql = sqlContext(repo.env, trx);
  const [existing] = await fetchByKeys(sql, repo.model, lookupsOf(repo.model, state.record, items[0]?.id !== undefined));
  if (existing) throw new ChangedMeanwhile();
  try {
    await savepoint(trx, (sp) => insertRow(sqlContext(repo.env, sp), repo.model, storedRow(repo, state)));
  } catch (error) {
    failures.set(state, failureOf(await repo.translated(() => Promise.reject(error)).catch((e) => e)));
  }
}

/**
 * Updates the changed records in one statement; when that fails, record by record to find the
 * failing ones. Each row is written only if its record is still at the version it was read at:
 * one that another request changed or deleted meanwhile ends the transaction (`ChangedMeanwhile`),
 * as a deadlock does (both are decided again, on locked records). Rows go in id order, the order
 * in which the database locks them when it visits them in the order given.
 */
async function updateChanged(write: DecidedWrite, states: RecordState[]) {
  const { trx, repo, ctx, failures } = write;
  const { dialect } = repo.env.database;
  const changed = [...states].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const isFinal = (error: unknown) => error instanceof ChangedMeanwhile || dialect.isDeadlock(error);
  const columns = [...new Set(changed.flatMap((s) => [...s.dirty].filter(isStoredField).map((f) => f.column)))];
  const actor = ctx.actor?.id ?? null;
  const rows = changed.map((s) => Object.assign(storedRow(repo, s), { modified_by_actor_id: actor, [VERSION_COLUMN]: storedVersion(s.record) }));
  const all = [...columns, 'modified_at', 'modified_by_id', 'modified_by_actor_id'];
  const writeRows = async (db: Transaction, part: Record<string, unknown>[]) => {
    if ((await updateRows(sqlContext(repo.env, db), repo.model, { rows: part, columns: all })) < part.length) throw new ChangedMeanwhile();
  };
  // Only multiple links changed: the record's own row just records who changed it and when.
  if (columns.length === 0) return writeRows(trx, rows);
  try {
    await savepoint(trx, (sp) => writeRows(sp, rows));
  } catch (error) {
    if (isFinal(error)) throw error;
    for (const [i, s] of changed.entries()) {
      await savepoint(trx, (sp) => writeRows(sp, [rows[i]])).catch(async (error) => {
        if (isFinal(error)) throw error;
        failures.set(s, failureOf(await repo.translated(() => Promise.reject(error)).catch((e) => e)));
      });
    }
  }
}

/** Writes the decided states: one insert and one update statement per chunk, join rows set-based. */
export async function writeDecided(write: DecidedWrite, decided: Prepared[]) {
  const { repo, failures } = write;
  const { model } = repo;
  const sql = sqlContext(repo.env, write.trx);
  const states = [...new Set(decided.map((p) => p.state as RecordState))];
  const fresh = states.filter((s) => s.isNew);
  const logging = await createsLogging(write, decided, states.length);
  const inserting = await startInsertRows(sql, model, { rows: fresh.map((s) => storedRow(repo, s)), logging, failOnTaken: write.optimistic });
  // While the database inserts, the changes are made ready: they hold unless an insert is lost,
  // a write fails or links move below.
  const ready = logging ? undefined : readyChanges(sql.dialect, decidedChanges(write, decided));
  const { ids: stored, logged } = await inserting.stored.catch((error: unknown) => {
    throw error instanceof KeyTakenMeanwhile ? new ChangedMeanwhile() : error;
  });
  const lostInserts = fresh.filter((x) => !stored.has(x.id));
  for (const lost of lostInserts) await recoverLostInsert(write, lost, decided.filter((p) => p.state === lost));
  const changed = states.filter((s) => !s.isNew && s.dirty.size > 0 && !failures.has(s));
  if (changed.length) await updateChanged(write, changed);
  const ok = states.filter((s) => !failures.has(s));
  /** Changes of the other records the links changed (logged after the items' own). */
  const moves: NewChange[] = [];
  for (const field of model.fields) {
    if (field.type !== 'linkMultiple') continue;
    const touched = ok.filter((s) => s.dirty.has(field));
    if (!touched.length) continue;
    const access = await repo.guard.access(write.ctx);
    const writer = { ctx: write.ctx, access, rows: rowRulesOf(repo, write.ctx) };
    if (field.linkKind === 'manyToMany') {
      // Pairs an item may not remove are judged per item (applyToExisting in run.ts). Items
      // changing records of a type the caller edits in part take the single-record path
      // (upsert.ts); judged here too, so that no path writes one unjudged.
      if (judgedOnOtherSide(sql.schema, field) && !editsAll(access, field.target)) {
        const stored = await fetchMultipleLinks(sql, field, { ownerIds: touched.map((s) => s.id) });
        for (const s of touched) {
          await assertOtherSide(sql, writer, { field, previous: stored.get(s.id), ids: s.record[field.key] as string[] });
        }
      }
      const sets = new Map(touched.map((s) => [s.id, s.record[field.key] as string[]]));
      moves.push(...movedLinkChanges(write.ctx, await replaceJoinRows(sql, field, { sets, change: rowChange(write.ctx, touched[0].record.modifiedAt as string) })));
    } else {
      // Items writing such a link take the single-record path (upsert.ts); judged here too, so that no path writes one unjudged.
      for (const s of touched) {
        const previous = (await fetchMultipleLinks(sql, field, { ownerIds: [s.id] })).get(s.id) ?? [];
        const ids = await withHiddenLinked(sql, writer, { field, previous, sent: s.record[field.key] as string[] });
        await assertOtherSide(sql, writer, { field, previous, ids });
        moves.push(...movedLinkChanges(write.ctx, await writeMultipleLink(sql, field, { ownerId: s.id, ids, previous, change: rowChange(write.ctx, s.record.modifiedAt as string) })));
      }
    }
  }
  if (logged) {
    // The insert logged the items' changes; nothing after it can have failed them.
    logging?.written();
    return insertChanges(sql, moves);
  }
  const asReady = ready && lostInserts.length === 0 && failures.size === 0 && moves.length === 0;
  await insertChanges(sql, asReady ? ready : [...decidedChanges(write, decided), ...moves]);
}

/**
 * The insert that logs the `Create` changes of a segment's new records itself (on PostgreSQL,
 * `createsLoggedByInsert`): when every item creates a record of its own (a batch of new records,
 * the bulk import) and all log the same fields. Other segments log their changes from the process.
 */
async function createsLogging(write: DecidedWrite, decided: readonly Prepared[], records: number): Promise<LoggingInsert | undefined> {
  const first = decided[0]?.created;
  if (!first || records !== decided.length || write.deltas.length > 0) return undefined;
  const fields = [...first.keys()];
  const { ctx } = write;
  const caller = { userId: ctx.user?.id ?? null, actorId: ctx.actor?.id ?? null, requestId: ctx.requestId ?? null, createdAt: nowDateTime() };
  // Asked before the items are compared: where the database cannot (SQLite), they are not.
  const logging = await createsLoggedByInsert(sqlContext(write.repo.env, write.trx), write.repo.model, { fields: fields.filter(isLogged), caller });
  if (!logging) return undefined;
  for (const p of decided) {
    if (p.status !== 'Created' || !p.created || p.created.size !== fields.length) return undefined;
    let i = 0;
    for (const field of p.created.keys()) if (field !== fields[i++]) return undefined;
  }
  return logging;
}

/**
 * One change per record the items created or changed (CONTRACT §16: one write, one change per
 * record, as its version moves once), in the order of each record's first item; logged in one
 * statement. Items of one record are merged: its first item's action, each field's value before
 * the first item that set it and after the last. An update whose fields all end as they were
 * logs nothing.
 */
function decidedChanges({ repo, ctx, failures, deltas }: DecidedWrite, decided: readonly Prepared[]): NewChange[] {
  const byRecord = new Map<RecordState, { action: ChangeAction; diff: Diff; merged: boolean }>();
  for (const p of decided) {
    const state = p.state as RecordState;
    if ((p.status !== 'Created' && p.status !== 'Updated') || failures.has(state)) continue;
    const seen = byRecord.get(state);
    if (seen) {
      seen.diff = mergedDiff(seen.diff, itemDiff(p), { created: seen.action === 'Create' });
      seen.merged = true;
      continue;
    }
    const diff = itemDiff(p);
    byRecord.set(state, { action: p.status === 'Created' ? 'Create' : changeAction(deltas, diff), diff, merged: false });
  }
  const at = nowDateTime();
  return [...byRecord]
    .filter(([, c]) => !c.merged || c.action === 'Create' || Object.keys(c.diff).length > 0)
    .map(([state, { action, diff }]) => changeOf(ctx, { entityType: repo.model.name, recordId: state.id, action, diff, owner: ownershipOf(state.record), at }));
}
