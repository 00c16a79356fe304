import type { UserAccess } from '../../auth/access-control';
import type { RequestContext } from '../../context';
import type { EntityModel, FieldModel, LinkEnd, MultipleLinkField } from '../../definition/model';
import { completeForCreate } from '../../definition/validate-record';
import { ApiError } from '../../errors';
import type { Transaction } from '../../sql/database';
import { sqlContext } from '../../sql/sql-context';
import { inTransaction } from '../../sql/transaction';
import { againAfterDeadlock } from '../../sql/deadlock-retry';
import { lockRowsInOrder } from '../../sql/link-store';
import type { SqlContext } from '../../sql/sql-context';
import { fetchByKeys, fetchMultipleLinks, keyLookups, loadLinkIds, lockInOrder, storedFields } from '../../sql/upsert-io';
import { nowDateTime } from '../../time';
import { uuidv7 } from '../../util/uuid';
import { addedLinks, linkValuesAfter, type LinkDelta } from '../link-delta';
import { assertNotRemoving, linkCheck, linksMade, unreadablePairs, type LinkCheck, type LinkWrite } from '../link-rules';
import type { Repository } from '../repository';
import { linkScopes } from '../link-scopes';
import { prepareRowRules, rowRulesOf } from '../row-rules';
import { assertClientMayChooseId, assertMay, checkFields } from '../write-rules';
import type { LinkWriter } from '../link-rules';
import { ambiguousLookup, assertHiddenHit, assertLookup, assertMayChange, hiddenCollision, missingRecord, seesHit } from './item-rules';
import { applyValues, BatchIndex, ChangedMeanwhile, failed, type UpsertMode, lookupOf, recordKeys, SegmentHazards, settle, uniqueViolation, type Hit, type Prepared, type RecordState, type UpsertResult } from './plan';
import { failureOf, writeDecided } from './write';
import { entityOf, shownKeys } from './results';

/** What the items of one segment of a run share: the caller, their rights, the batch so far, the time. */
interface Run {
  repo: Repository;
  writer: LinkWriter;
  /** `update`: an item that names no record fails (mass updates) instead of creating one. */
  mode: UpsertMode;
  /** The link rules for the items of the segment (read for all of them at once). */
  links: LinkCheck;
  /** Ids every item adds to and removes from links of its record (mass updates). */
  deltas: readonly LinkDelta[];
  index: BatchIndex;
  hazards: SegmentHazards;
  /** Items of the segment decided so far (failed ones not counted: they write nothing). */
  decided: number;
  /** One time for the whole segment: its items are stored by one transaction. */
  now: string;
  /** What a new record of the run starts from: stored fields null, created and modified now by the caller. */
  blank: Record<string, unknown>;
  /** Keys of multiple links, which a new record starts with as empty lists. */
  listKeys: string[];
  /** Of the many-to-many pairs the stored records hold, the linked records the caller may not read (see `unreadableLinked`). */
  unreadable: Map<MultipleLinkField, Set<string>>;
}

/**
 * The link rules on an item, at the point every write checks them: after the field rules, before
 * unique keys. Ids an earlier item of the batch created count as stored (a link to the own type
 * may name them before they are written).
 */
function assertItemLinks(run: Run, p: Prepared, existing?: Record<string, unknown>): void {
  const { model } = run.repo;
  const known = (field: LinkEnd, id: string) => field.target === model.name && !!run.index.find({ id, unique: [], indexes: [] });
  const write = linkWrite(run.deltas, p);
  const error = run.links(existing ? { values: linksMade(existing, write.values) } : write, { known });
  if (error) throw error;
}

/** What the link rules judge of an item: the links it sets, and the ids the run's deltas add. */
const linkWrite = (deltas: readonly LinkDelta[], p: Prepared): LinkWrite => (deltas.length ? { values: new Map([...p.values, ...addedLinks(deltas)]) } : p);

/** An item's values with the links the run's deltas change, computed from the record as the batch holds it. */
function withDeltas(run: Run, p: Prepared, record: Record<string, unknown>): Map<FieldModel, unknown> {
  if (!run.deltas.length) return p.values;
  const values = new Map(p.values);
  for (const [key, value] of Object.entries(linkValuesAfter(run.deltas, record))) values.set(run.repo.model.byKey.get(key) as FieldModel, value);
  return values;
}

/**
 * Where a decided item goes: into the segment; into it as its last item; or, nothing decided for
 * it, into the next segment, once the items before it are stored (see `SegmentHazards`).
 */
type Placement = 'in' | 'last' | 'later';

/** As one-at-a-time processing would: a unique value another record holds fails the item (409 text). */
function assertNoCollision(run: Run, state: RecordState | undefined, keys: readonly string[]): void {
  const key = run.index.collision(state, keys);
  if (key) throw uniqueViolation(run.repo.model, key);
}

/** Whether an item that leaves `state` (undefined: a new record) holding `keys` must wait for the items before it. */
function mustWait(run: Run, state: RecordState | undefined, { p, keys }: { p: Prepared; keys: readonly string[] }): boolean {
  return run.hazards.takesFreed(state, keys) || run.hazards.linksOthers(state, p);
}

/** An item that names a record of the batch (stored, or created by an earlier item) changes it. */
function applyToExisting(run: Run, p: Prepared, hit: Hit): Placement {
  const { repo, writer } = run;
  const found = hit.state;
  assertMayChange(repo.model, writer, hit);
  const values = withDeltas(run, p, found.record);
  checkFields(repo.model, writer.access, { values, sent: [...values.keys()], existing: found.record });
  assertItemLinks(run, p, found.record);
  for (const [field, unreadable] of run.unreadable) {
    const next = values.get(field) as string[] | undefined;
    if (next) assertNotRemoving(field, { removed: ((found.record[field.key] as string[] | undefined) ?? []).filter((id) => !next.includes(id)), unreadable });
  }
  const before = recordKeys(repo.model, found.record);
  const after = recordKeys(repo.model, found.record, values);
  assertNoCollision(run, found, after);
  const wait = mustWait(run, found, { p, keys: after });
  if (wait && run.decided > 0) return 'later';
  settle(found, p);
  const { changed, diff } = applyValues(found, values);
  if (changed) Object.assign(found.record, { modifiedAt: run.now, modifiedById: writer.ctx.user?.id ?? null });
  p.status = changed ? 'Updated' : 'NotModified';
  p.diff = diff;
  run.index.reindex(found, before, after);
  run.hazards.release(found, before, after);
  run.hazards.track(found, values);
  return wait ? 'last' : 'in';
}

/** The rules of an item that creates a record, in the order of every create; answers its values with the defaults. */
function assertCreate(run: Run, p: Prepared): Map<FieldModel, unknown> {
  const { repo, writer } = run;
  assertMay(repo.model, writer.access, 'create');
  assertClientMayChooseId(repo.model, p.id);
  const values = completeForCreate(repo.model, p.values);
  // The right to edit is needed for the fields the item sent, not for the defaults.
  checkFields(repo.model, writer.access, { values, sent: [...p.values.keys()] });
  assertItemLinks(run, p);
  return values;
}

/** An item that names no record of the batch creates one. */
function createNew(run: Run, p: Prepared): Placement {
  const { repo } = run;
  const values = assertCreate(run, p);
  // A copy of one object shape is cheaper than adding the keys one by one. The copy alone: V8
  // copies an object spread with further keys (`{ ...blank, id }`) key by key, 20 times slower.
  const record: Record<string, unknown> = { ...run.blank };
  record.id = p.id ?? p.newId ?? uuidv7();
  for (const key of run.listKeys) record[key] = [];
  const dirty = new Set<FieldModel>();
  values.forEach((v, f) => {
    record[f.key] = f.type === 'linkMultiple' ? [...new Set(v as string[])] : v;
    dirty.add(f);
  });
  const keys = recordKeys(repo.model, record);
  assertNoCollision(run, undefined, keys);
  const wait = mustWait(run, undefined, { p, keys });
  if (wait && run.decided > 0) return 'later';
  const state: RecordState = { id: record.id as string, record, isNew: true, dirty };
  settle(state, p);
  p.status = 'Created';
  p.created = values;
  run.index.add(state, keys);
  run.hazards.track(state, values);
  return wait ? 'last' : 'in';
}

/**
 * Decides one item against the segment so far, exactly as processing the items one at a time
 * would; the SQL runs afterwards, set-based.
 */
function decide(run: Run, p: Prepared): Placement {
  assertLookup(run.repo.model, run.writer.access, p);
  const hit = run.index.find(lookupOf(run.repo.model, p.id, p.values));
  if (hit === 'ambiguous') throw ambiguousLookup();
  if (hit && !seesHit(run.repo.model, run.writer, hit)) {
    assertHiddenHit(run.repo.model, run.writer.access, { hit, mode: run.mode });
    assertCreate(run, p);
    throw hiddenCollision(run.repo.model, hit);
  }
  if (hit) return applyToExisting(run, p, hit);
  if (run.mode === 'update') throw missingRecord(run.repo.model, run.writer.access, p.id);
  return createNew(run, p);
}

/**
 * Puts the stored records the items name into the index, with the ids of all their multiple links
 * (results show every stored field, also those no item sets): one query per link field.
 */
async function loadNamed(trx: Transaction, run: Run, { items, attempt }: { items: readonly Prepared[]; attempt: Attempt }): Promise<number> {
  const { repo } = run;
  const sql = sqlContext(repo.env, trx);
  const lock = attempt === 'lock';
  const named = attempt === 'guess' ? [] : await fetchByKeys(sql, repo.model, keyLookups(repo.model, items));
  const locked = lock ? await lockLinked(sql, run, { items, records: named }) : undefined;
  const found = lock ? await lockInOrder(sql, repo.model, named) : named;
  // A caller who sees part of a one-to-many list decides on that part (the rest stays as stored).
  if (found.length) await loadLinkIds(sql, repo.model, { records: found, scopes: await linkScopes(repo, run.writer.ctx, repo.model.fields) });
  // Linked meanwhile to a record not locked: its row would be locked out of order; decided again.
  if (locked && [...locked].some(([field, ids]) => found.some((r) => [r[field.key]].flat().some((id) => typeof id === 'string' && !ids.has(id))))) throw new ChangedMeanwhile();
  // Only the many-to-many lists the items change can lose a pair.
  const changing = repo.model.fields.filter((f): f is MultipleLinkField => f.type === 'linkMultiple' && f.linkKind === 'manyToMany' && (run.deltas.some((d) => d.field === f) || items.some((p) => p.values.has(f))));
  run.unreadable = await unreadablePairs(sql, run.writer, { fields: changing, records: found });
  for (const record of found) {
    const state: RecordState = { id: record.id as string, record, isNew: false, dirty: new Set() };
    run.index.add(state);
    run.hazards.track(state);
  }
  return found.length;
}

/** The multiple links that items or deltas change. */
function multipleLinksChanged(model: EntityModel, { items, deltas }: { items: readonly Prepared[]; deltas: readonly LinkDelta[] }): MultipleLinkField[] {
  return model.fields.filter((f): f is MultipleLinkField => f.type === 'linkMultiple' && (deltas.some((d) => d.field === f) || items.some((p) => p.values.has(f))));
}

/**
 * Before a locked try: the rows of the records the segment names and of the records on the other
 * side of the multiple links it changes (those linked now, those the items send, those the deltas
 * add or remove), in the order every write locks them (table, then id): the batch then waits for
 * updates, link routes and other batches of the records it links instead of deadlocking with
 * them. A record linked meanwhile may be missed; the deadlock retry covers it.
 */
async function lockLinked(sql: SqlContext, run: Run, { items, records }: { items: readonly Prepared[]; records: readonly Record<string, unknown>[] }): Promise<ReadonlyMap<MultipleLinkField, ReadonlySet<string>> | undefined> {
  if (!sql.dialect.locksRows) return undefined;
  const ids = records.map((r) => r.id as string);
  const changing = multipleLinksChanged(run.repo.model, { items, deltas: run.deltas });
  const targets = new Map<MultipleLinkField, Set<string>>();
  for (const field of changing) {
    const others = new Set<string>();
    for (const p of items) for (const id of [p.values.get(field)].flat()) if (typeof id === 'string') others.add(id);
    for (const d of run.deltas) if (d.field === field) for (const id of [...(d.add ?? []), ...(d.remove ?? [])]) others.add(id);
    for (const linked of (await fetchMultipleLinks(sql, field, { ownerIds: ids })).values()) for (const id of linked) others.add(id);
    targets.set(field, others);
  }
  await lockRowsInOrder(sql, { model: run.repo.model, ids, targets });
  return targets;
}

/** What a new record starts from: its id and every stored field null, then who created it and when. */
function blankRecord(model: EntityModel, ctx: RequestContext, now: string): Record<string, unknown> {
  const record: Record<string, unknown> = { id: null };
  for (const f of storedFields(model)) if (!f.system) record[f.key] = null;
  const [userId, actorId] = [ctx.user?.id ?? null, ctx.actor?.id ?? null];
  return Object.assign(record, { createdAt: now, modifiedAt: now, createdById: userId, modifiedById: userId, createdByActorId: actorId, modifiedByActorId: actorId });
}

/** The caller of a run, what the caller may read and write, and where the results go. */
interface RunCall {
  ctx: RequestContext;
  access: UserAccess;
  results: UpsertResult[];
  mode: UpsertMode;
  deltas: readonly LinkDelta[];
}

/**
 * How a try of a segment reads the records its items name:
 * - `guess`: not at all, as if every item created a record; the insert fails on a key that is
 *   stored (the unique indexes on live rows are the lookup), and the segment is tried again (`read`);
 * - `read`: looked up without locks; a record changed meanwhile tries the segment again (`lock`);
 * - `lock`: looked up and locked in id order, with the records on the other side of the multiple
 *   links the items change (see `lockLinked`).
 */
type Attempt = 'guess' | 'read' | 'lock';

/**
 * Of each entity type, whether its last segment found no stored record: a batch of new records is
 * likely followed by another (an import), and then its next segment is guessed new, which spares
 * the database a lookup of every key; a segment that finds or meets a stored record stops that.
 */
const foundNone = new WeakMap<EntityModel, boolean>();

/**
 * Decides and writes items of a run from the first on, in one transaction, until one must wait for
 * the writes of those before it; answers how many it decided (failed ones included).
 */
async function upsertSegment(repo: Repository, call: RunCall, { items, attempt, turns }: { items: readonly Prepared[]; attempt: Attempt; turns: boolean }): Promise<number> {
  const { model, env } = repo;
  const { ctx, access, results } = call;
  const decided: Prepared[] = [];
  const failures = new Map<RecordState, ApiError>();
  const now = nowDateTime();
  const run: Run = {
    repo,
    writer: { ctx, access, rows: rowRulesOf(repo, ctx) },
    mode: call.mode,
    links: () => undefined,
    deltas: call.deltas,
    index: new BatchIndex(model),
    hazards: new SegmentHazards(model),
    decided: 0,
    now,
    blank: blankRecord(model, ctx, now),
    listKeys: model.fields.filter((f) => f.type === 'linkMultiple').map((f) => f.key),
    unreadable: new Map(),
  };
  let count = 0;
  await repo.translated(() =>
    inTransaction(env.database, async (trx) => {
      // Segments that lost a race take turns: each then finds what the one before it stored.
      if (turns) await env.database.dialect.lock(trx, [`upsert-turns:${model.table}`]);
      const found = await loadNamed(trx, run, { items, attempt });
      run.links = await linkCheck(sqlContext(env, trx), run.writer, items.map((p) => linkWrite(run.deltas, p)));
      for (const p of items) {
        let placement: Placement = 'in';
        try {
          placement = decide(run, p);
          if (placement !== 'later') decided.push(p);
        } catch (error) {
          // Judged as the create it may not be: the segment is read and decided again.
          if (attempt === 'guess') throw new ChangedMeanwhile();
          results[p.index] = failed(failureOf(error));
        }
        if (placement === 'later') break;
        count++;
        run.decided = decided.length;
        if (placement === 'last') break;
      }
      await writeDecided({ trx, repo, ctx, failures, deltas: run.deltas, optimistic: attempt !== 'lock' }, decided);
      foundNone.set(model, found === 0);
    }),
  );
  const keys = await shownKeys(repo, ctx);
  for (const p of decided) {
    const state = p.state as RecordState;
    const failure = failures.get(state);
    results[p.index] = failure ? failed(failure) : { status: p.status as UpsertResult['status'], stored: true, entity: entityOf(keys, p.snapshot ?? state.record) };
  }
  return count;
}

/** Tries of a segment whose records other requests keep changing between its reads and its writes. */
const CHANGED_ATTEMPTS = 5;

/** Items a segment after a cut looks up at least: the next one is loaded for twice the items the last one decided. */
const MIN_SEGMENT = 16;

/**
 * One run of consecutive items of one entity type, without link objects: set-based, in one
 * transaction, unless an item must wait for the writes of those before it (see `SegmentHazards`);
 * the run then goes on from that item in a new transaction, on the records as now stored.
 */
export async function upsertRun(repo: Repository, ctx: RequestContext, { items, results, mode, links }: { items: Prepared[]; results: UpsertResult[]; mode: UpsertMode; links: readonly LinkDelta[] }): Promise<void> {
  const call: RunCall = { ctx, access: await repo.guard.access(ctx), results, mode, deltas: links };
  // The link rules read the targets' row rules inside the transaction: resolved before it.
  await prepareRowRules(repo, ctx);
  let size = items.length;
  for (let start = 0; start < items.length; ) {
    const segment = items.slice(start, start + size);
    // Read without locks first (or not at all, for a segment guessed new: see `foundNone`); after
    // a record changed meanwhile or a deadlock, with every named record locked in id order as it
    // is read (a record the segment finds only while writing, in place of a new one another
    // request stored first, can still change meanwhile). A segment that changes multiple links
    // locks from the start, with the records it links (`lockLinked`): it writes rows of two
    // tables, which other writes lock in the other order otherwise.
    const guess = mode === 'upsert' && !links.length && foundNone.get(repo.model) === true;
    let attempt: Attempt = multipleLinksChanged(repo.model, { items: segment, deltas: links }).length > 0 ? 'lock' : guess ? 'guess' : 'read';
    // After a race lost by a try that read its keys (a record changed meanwhile, a key taken, a
    // deadlock), the locked tries of the entity type take turns (see `upsertSegment`).
    let turns = false;
    const count = await againAfterDeadlock(repo.env.database.dialect, async () => {
      for (let tries = 1; ; tries++) {
        try {
          return await upsertSegment(repo, call, { items: segment, attempt, turns });
        } catch (error) {
          const guessed = attempt === 'guess';
          turns ||= !guessed;
          attempt = guessed && error instanceof ChangedMeanwhile ? 'read' : 'lock';
          if (guessed) foundNone.set(repo.model, false);
          if (!(error instanceof ChangedMeanwhile)) throw error;
          if (tries >= CHANGED_ATTEMPTS) throw new ApiError('CORE_CONFLICT', `${repo.model.name} records of the batch were changed by other requests while it was written; send it again`);
        }
      }
    });
    start += count;
    size = count < segment.length ? Math.max(MIN_SEGMENT, 2 * count) : 2 * size;
  }
}
