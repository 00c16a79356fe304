import type { RequestContext } from '../context';
import { isValidId } from '../definition/validate-record';
import { ApiError, assertKnownKeys } from '../errors';
import { eventLoopTurns } from '../util/event-loop';
import { findSingleLinkObjects } from './link-objects';
import { splitLinkObjects } from './link-resolver';
import type { Repository } from './repository';
import { fetchByKeys, keyLookups } from './upsert-io';
import { BatchIndex, failed, lookupOf, type Prepared, type UpsertResult } from './upsert-plan';
import { entityOf, shownKeys, upsertRun } from './upsert-run';

export type { UpsertResult } from './upsert-plan';

/**
 * Items of one run written in one transaction at most: a longer run is written in batches, with
 * turns of the event loop between them (SQLite runs a batch without letting other requests in).
 */
const MAX_RUN_ITEMS = 500;

/** Tries of an item whose create lost a race: each one looks the record up again. */
const SINGLE_ATTEMPTS = 3;

/**
 * The stored record an item names, by the lookup of the spec. The records its single-link
 * objects name count as the ids of those links (`brand: {name}` is `brandId` in a unique index).
 */
async function lookUpSingle(repo: Repository, ctx: RequestContext, payload: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
  const { data, objects } = splitLinkObjects(repo.model, payload);
  const values = repo.validate(Object.fromEntries(Object.entries(data).filter(([k]) => k !== 'id')), 'update');
  const id = typeof payload.id === 'string' ? payload.id : undefined;
  return repo.env.database.knex.transaction(async (trx) => {
    await findSingleLinkObjects(repo, { trx, ctx }, { objects, values });
    const index = new BatchIndex(repo.model);
    for (const record of await fetchByKeys(trx, repo, keyLookups(repo.model, [{ id, values }]))) index.add({ id: record.id as string, record, isNew: false, dirty: new Set() });
    const hit = index.find(lookupOf(repo.model, id, values));
    if (hit === 'ambiguous') throw new ApiError('CORE_CONFLICT', 'The unique fields of the payload point at different records');
    return hit?.record;
  });
}

const isUniqueViolation = (error: unknown) => error instanceof ApiError && error.code === 'CORE_UNIQUE_VIOLATION';

/**
 * An item with link objects or write hooks goes through the single-record path (find-or-create
 * and hooks need it). A create that another request's create of the same key beat (a unique
 * violation) looks the record up again, and updates it.
 */
async function upsertSingle(repo: Repository, ctx: RequestContext, payload: Record<string, unknown>): Promise<UpsertResult> {
  const shown = shownKeys(repo, await repo.guard.access(ctx));
  for (let attempt = 1; ; attempt++) {
    const match = await lookUpSingle(repo, ctx, payload);
    if (!match) {
      const created = await repo.create(ctx, payload).catch((error: unknown) => {
        if (attempt < SINGLE_ATTEMPTS && isUniqueViolation(error)) return undefined;
        throw error;
      });
      if (created) return { status: 'Created', stored: true, entity: entityOf(shown, created) };
      continue;
    }
    const { id: _id, ...rest } = payload;
    // modifiedAt has whole seconds: it cannot tell a change made within the second of the last one.
    const { record, written } = await repo.updateRecord(ctx, match.id as string, rest);
    return { status: written ? 'Updated' : 'NotModified', stored: true, entity: entityOf(shown, record) };
  }
}

/** Entity types with write hooks (password hashing, plugins) go through the single-record path. */
const hasWriteHooks = (repo: Repository) =>
  (['beforeCreate', 'afterCreate', 'beforeUpdate', 'afterUpdate'] as const).some((h) => repo.env.hooks.has(h, repo.model.name));

/**
 * Creates or updates each item, in order, with one result per item. Consecutive items of one
 * entity type run set-based in one transaction; items are independent (one failing stores the
 * others).
 */
export async function upsertItems(lookup: (entity: string) => Repository | undefined, ctx: RequestContext, items: readonly unknown[]): Promise<UpsertResult[]> {
  const results: UpsertResult[] = new Array(items.length);
  const hooked = new Map<Repository, boolean>();
  let run: Prepared[] = [];
  let runRepo: Repository | undefined;
  const turn = eventLoopTurns();
  const flush = async () => {
    if (runRepo && run.length) await upsertRun(runRepo, ctx, { items: run, results });
    run = [];
    await turn();
  };
  for (const [index, item] of items.entries()) {
    const { entity, payload } = (item ?? {}) as { entity?: unknown; payload?: unknown };
    const repo = typeof entity === 'string' ? lookup(entity) : undefined;
    if (repo !== runRepo) await flush();
    runRepo = repo;
    try {
      if (typeof entity !== 'string') throw new ApiError('CORE_VALIDATION_FAILED', 'Each item needs an entity name');
      assertKnownKeys(item as object, ['entity', 'payload'], 'an upsert item');
      if (!repo) throw new ApiError('CORE_NOT_FOUND', `Unknown entity type '${entity}'`);
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new ApiError('CORE_VALIDATION_FAILED', 'payload must be an object');
      const body = payload as Record<string, unknown>;
      const { data, objects } = splitLinkObjects(repo.model, body);
      if (!hooked.has(repo)) hooked.set(repo, hasWriteHooks(repo));
      if (objects.size || hooked.get(repo)) {
        await flush();
        results[index] = await upsertSingle(repo, ctx, body).catch((error) => {
          if (error instanceof ApiError) return failed(error.message);
          throw error;
        });
        await turn();
        continue;
      }
      const { id } = data;
      if (id !== undefined && id !== null && !isValidId(id)) throw new ApiError('CORE_INVALID_ID', 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -');
      // `id` is a system key: validation lets it pass and leaves it out of the values.
      run.push({ index, id: (id ?? undefined) as string | undefined, data, values: repo.validate(data, 'update') });
      if (run.length >= MAX_RUN_ITEMS) await flush();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results[index] = failed(error.message);
    }
  }
  await flush();
  return results;
}
