import type { RequestContext } from '../../context';
import { isValidId } from '../../definition/validate-record';
import { ApiError, assertKnownKeys } from '../../errors';
import { isLive } from '../../sql/record-store';
import { sqlContext } from '../../sql/sql-context';
import { inTransaction } from '../../sql/transaction';
import { eventLoopTurns } from '../../util/event-loop';
import { fetchByKeys, keyLookups } from '../../sql/upsert-io';
import { findSingleLinkObjects } from '../find-or-create';
import { splitLinkObjects } from '../link-objects';
import { derivesCode } from '../option-codes';
import type { LinkDelta } from '../link-delta';
import type { Repository } from '../repository';
import type { UserAccess } from '../../auth/access-control';
import { editsAll, judgedOnOtherSide } from '../counterparts';
import { prepareRowRules, rowFilter } from '../row-rules';
import { ambiguousLookup, assertHiddenHit, assertLookup, assertMayChange, hiddenCollision, missingRecord, seesHit } from './item-rules';
import { BatchIndex, failed, lookupOf, type Hit, type Prepared, type UpsertMode, type UpsertResult } from './plan';
import { entityOf, shownKeys } from './results';
import { createdBefore, newIdOf, type NewIds } from './new-ids';
import { upsertRun } from './run';

export { publicResult } from './plan';
export type { UpsertResult } from './plan';

/**
 * Items of one run written in one transaction at most where the driver blocks the process while a
 * statement runs (SQLite): a longer run is written in batches, with turns of the event loop between
 * them, so that other requests get in. An asynchronous driver lets them in anyway. At 250 items
 * the longest batch (with webhooks to route its changes to) holds the loop for well under 200 ms of
 * CPU (CONTRACT §17); 500 came close to 300 ms.
 */
const MAX_BLOCKING_RUN_ITEMS = 250;

/** Tries of an item whose create lost a race: each one looks the record up again. */
const SINGLE_ATTEMPTS = 3;

/**
 * The stored record an item names, by the lookup of the spec, as the caller may change it (the
 * rules of `item-rules.ts`). The records its single-link objects name count as the ids of those
 * links (`brand: {name}` is `brandId` in a unique index). A record the caller cannot see (outside
 * its `own` level or its row rules) comes back as `hidden`: the item is then judged as the create
 * it would be, and collides with it (in update mode: not found).
 */
async function lookUpSingle(repo: Repository, { ctx, mode }: { ctx: RequestContext; mode: UpsertMode }, payload: Record<string, unknown>): Promise<Hit | { hidden: Hit } | undefined> {
  const within = await prepareRowRules(repo, ctx);
  // Attribute values (`Flatten-Attributes: true`) are no lookup keys.
  const own = (await repo.env.attributes?.prepareWrite(ctx, repo.model, payload))?.body ?? payload;
  const { data, objects } = splitLinkObjects(repo.model, own);
  const values = repo.validate(Object.fromEntries(Object.entries(data).filter(([k]) => k !== 'id')), 'update');
  const id = typeof payload.id === 'string' ? payload.id : undefined;
  const access = await repo.guard.access(ctx);
  assertLookup(repo.model, access, { id, values });
  const hit = await inTransaction(repo.env.database, async (trx) => {
    await findSingleLinkObjects(repo, { trx, ctx }, { objects, values });
    // Again with the ids the objects named: a unique index that holds a link (`brand: {name}`)
    // is a lookup key now, as it is with `brandId` on the set-based path.
    assertLookup(repo.model, access, { id, values });
    const index = new BatchIndex(repo.model);
    const sql = sqlContext(repo.env, trx);
    for (const record of await fetchByKeys(sql, repo.model, keyLookups(repo.model, [{ id, values }]))) index.add({ id: record.id as string, record, isNew: false, dirty: new Set() });
    const found = index.find(lookupOf(repo.model, id, values));
    if (!found || found === 'ambiguous') return found;
    const seen = seesHit(repo.model, { ctx, access }, found) && (!within || (await isLive(sql, repo.model, { id: found.state.id, within })));
    return seen ? found : { hidden: found };
  });
  if (hit === 'ambiguous') throw ambiguousLookup();
  if (hit && 'hidden' in hit) {
    assertHiddenHit(repo.model, access, { hit: hit.hidden, mode });
    return hit;
  }
  if (hit) assertMayChange(repo.model, { ctx, access }, hit);
  return hit;
}

const isUniqueViolation = (error: unknown) => error instanceof ApiError && error.code === 'CORE_UNIQUE_VIOLATION';

/**
 * An item that the set-based path cannot write goes through the single-record path (find-or-create,
 * hooks, values derived on create). A create that another request's create of the same key beat
 * (a unique violation) looks the record up again, and updates it.
 */
async function upsertSingle(repo: Repository, call: UpsertCall, { payload, newId }: { payload: Record<string, unknown>; newId?: string }): Promise<UpsertResult> {
  const { ctx } = call;
  const shown = await shownKeys(repo, ctx);
  for (let attempt = 1; ; attempt++) {
    const hit = await lookUpSingle(repo, { ctx, mode: call.mode ?? 'upsert' }, payload);
    if (!hit && call.mode === 'update') throw missingRecord(repo.model, await repo.guard.access(call.ctx), String(payload.id ?? ''));
    if (hit && 'hidden' in hit) {
      // Judged as the create it would be: its rules first, then the collision with the record the caller cannot see.
      const created = await repo.create(ctx, payload, { newId }).catch((error: unknown) => Promise.reject(isUniqueViolation(error) ? hiddenCollision(repo.model, hit.hidden) : error));
      return { status: 'Created', stored: true, entity: entityOf(shown, created) };
    }
    if (!hit) {
      const created = await repo.create(ctx, payload, { newId }).catch((error: unknown) => {
        if (attempt < SINGLE_ATTEMPTS && isUniqueViolation(error)) return undefined;
        throw error;
      });
      if (created) return { status: 'Created', stored: true, entity: entityOf(shown, created) };
      continue;
    }
    const { id: _id, ...rest } = payload;
    // modifiedAt has whole seconds: it cannot tell a change made within the second of the last one.
    const { record, written } = await repo.updateRecord(ctx, { id: hit.state.id, body: rest, links: call.links });
    return { status: written ? 'Updated' : 'NotModified', stored: true, entity: entityOf(shown, record) };
  }
}

/** Entity types with write hooks (password hashing, plugins) go through the single-record path. */
const hasWriteHooks = (repo: Repository) =>
  (['beforeCreate', 'afterCreate', 'beforeUpdate', 'afterUpdate'] as const).some((h) => repo.env.hooks.has(h, repo.model.name));

/**
 * Whether an item needs the single-record path: link objects (find-or-create), write hooks or row
 * rules that apply to the caller (`perRecord`: the rules judge each record after its write, in its
 * transaction), values derived on create, or attribute values (`Flatten-Attributes: true`).
 */
function needsSinglePath(repo: Repository, ctx: RequestContext, { body, objects, perRecord }: { body: Record<string, unknown>; objects: number; perRecord: boolean }): boolean {
  if (objects > 0 || perRecord || derivesCode(repo, body)) return true;
  return !!ctx.flattenAttributes && !!repo.model.def.hasAttributes && Object.keys(body).some((key) => key !== 'id' && !repo.model.byKey.has(key));
}

/**
 * Keys an item may send that only the single-record path judges, so an item sending one takes
 * it: multiple links whose writes are judged on the records they add and remove (see
 * `assertOtherSide`): a one-to-many list, which writes those records' rows, and a many-to-many
 * link with another side whose type the caller may edit only in part (`own`; the batch judges a
 * type it may not edit at all with the field rights); and computed fields, which may come back as
 * a read shows them (see `withComputed` in update.ts).
 */
function otherSideKeys(repo: Repository, access: UserAccess): Set<string> {
  const keys = new Set<string>();
  for (const field of repo.model.fields) {
    const judged = field.type === 'linkMultiple' && judgedOnOtherSide(repo.env.schema, field) && (field.linkKind === 'hasMany' || !editsAll(access, field.target));
    if (judged || field.def.computed) keys.add(field.key).add(field.name);
  }
  return keys;
}

/** An item's entity type and payload, checked (400 text for a Failed item otherwise). */
function itemParts(lookup: (entity: string) => Repository | undefined, item: unknown): { repo: Repository; body: Record<string, unknown> } {
  const { entity, payload } = (item ?? {}) as { entity?: unknown; payload?: unknown };
  if (typeof entity !== 'string') throw new ApiError('CORE_VALIDATION_FAILED', 'Each item needs an entity name');
  assertKnownKeys(item as object, ['entity', 'payload'], 'an upsert item');
  const repo = lookup(entity);
  if (!repo) throw new ApiError('CORE_NOT_FOUND', `Unknown entity type '${entity}'`);
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new ApiError('CORE_VALIDATION_FAILED', 'payload must be an object');
  return { repo, body: payload as Record<string, unknown> };
}

/**
 * The database's faults (a statement past its timeout, the database out of reach, the instance
 * closing): with `UpsertCall.faultsFailCall`, they fail the whole call, not the item they hit.
 */
const DATABASE_FAULTS: ReadonlySet<string> = new Set(['CORE_TIMEOUT', 'CORE_DATABASE_UNAVAILABLE', 'CORE_SHUTTING_DOWN']);

/** The result of an item an error ended: `Failed` with its message, unless the error fails the call (a fault of the server, or `DATABASE_FAULTS` for `faultsFailCall`). */
const failureOf =
  ({ faultsFailCall = false }: Pick<UpsertCall, 'faultsFailCall'>) =>
  (error: unknown): UpsertResult => {
    if (error instanceof ApiError && !(faultsFailCall && DATABASE_FAULTS.has(error.code))) return failed(error);
    throw error;
  };

/** Who upserts, through which repositories, and whether items may create records. */
export interface UpsertCall {
  lookup: (entity: string) => Repository | undefined;
  ctx: RequestContext;
  /** Default `upsert`; `update` (mass updates) fails an item that names no record. */
  mode?: UpsertMode;
  /** Ids every item adds to and removes from links of its record (mass updates' `addLinks` and `removeLinks`). */
  links?: readonly LinkDelta[];
  /**
   * A request answers at once: a fault of the database fails it (503 `CORE_TIMEOUT` with
   * `Retry-After`, CONTRACT §17), and the items decided before stay stored. A job leaves it off:
   * the item the fault hit is `Failed`, and the job goes on.
   */
  faultsFailCall?: boolean;
  /**
   * The ids of the records items create, by position (a job's, so that a run of the same items
   * again creates nothing twice: an item whose record exists under its id updates it, and counts
   * as `Created` when it changes nothing).
   */
  newIds?: NewIds;
}

/**
 * Creates or updates each item, in order, with one result per item. Consecutive items of one
 * entity type run set-based in one transaction; items are independent (one failing stores the
 * others).
 */
export async function upsertItems(call: UpsertCall, items: readonly unknown[]): Promise<UpsertResult[]> {
  const { lookup, ctx } = call;
  const mode = call.mode ?? 'upsert';
  const failedWith = failureOf(call);
  const results: UpsertResult[] = new Array(items.length);
  const resumed = call.newIds ? await createdBefore(lookup, { items, newIds: call.newIds }) : new Map<number, string>();
  let run: Prepared[] = [];
  let runRepo: Repository | undefined;
  /** Whether row rules apply to the caller on the run's entity type, or write hooks to its records. */
  let perRecord = false;
  /** Multiple links of the run's entity type judged on their other side, and whether the mass update's deltas write one. */
  let otherSide = new Set<string>();
  let deltasOnOtherSide = false;
  const turn = eventLoopTurns();
  const flush = async () => {
    const items = run;
    run = [];
    if (runRepo && items.length) {
      // A run that fails as a whole fails its items still undecided (those decided before were
      // stored by transactions of their own); a fault of the server still fails the request.
      await upsertRun(runRepo, ctx, { items, results, mode, links: call.links ?? [] }).catch((error: unknown) => {
        const failure = failedWith(error);
        for (const p of items) results[p.index] ??= failure;
      });
    }
    await turn();
  };
  for (const [index, item] of items.entries()) {
    try {
      const parts = itemParts(lookup, item);
      const { repo } = parts;
      const body = resumed.has(index) ? { ...parts.body, id: resumed.get(index) } : parts.body;
      const newId = newIdOf(call.newIds, { repo, body, index });
      if (repo !== runRepo) {
        await flush();
        // Resolved once per request and entity type: no work for a type without rules.
        perRecord = hasWriteHooks(repo) || (await rowFilter(repo, ctx)) !== undefined;
        otherSide = otherSideKeys(repo, await repo.guard.access(ctx));
        deltasOnOtherSide = (call.links ?? []).some((d) => otherSide.has(d.field.key));
      }
      runRepo = repo;
      const { data, objects } = splitLinkObjects(repo.model, body);
      const onOtherSide = deltasOnOtherSide || (otherSide.size > 0 && Object.keys(body).some((key) => otherSide.has(key)));
      if (needsSinglePath(repo, ctx, { body, objects: objects.size, perRecord: perRecord || onOtherSide })) {
        await flush();
        results[index] = await upsertSingle(repo, { lookup, ctx, mode, links: call.links }, { payload: body, newId }).catch(failedWith);
        await turn();
        continue;
      }
      const { id } = data;
      if (id !== undefined && id !== null && !isValidId(id)) throw new ApiError('CORE_INVALID_ID', 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -');
      // `id` is a system key: validation lets it pass and leaves it out of the values.
      run.push({ index, id: (id ?? undefined) as string | undefined, newId, data, values: repo.validate(data, 'update') });
      if (repo.env.database.dialect.blocksEventLoop && run.length >= MAX_BLOCKING_RUN_ITEMS) await flush();
    } catch (error) {
      results[index] = failedWith(error);
    }
  }
  await flush();
  // The record was created by an earlier run of this item, which answered Created.
  for (const index of resumed.keys()) if (results[index].status === 'NotModified') results[index] = { ...results[index], status: 'Created' };
  return results;
}
