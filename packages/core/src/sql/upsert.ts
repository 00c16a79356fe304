import type { Knex } from 'knex';
import type { UserAccess } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel } from '../definition/normalize';
import { completeForCreate, isValidId } from '../definition/validate-record';
import { ApiError } from '../errors';
import { nowDateTime } from '../time';
import { uuidv7 } from '../util/uuid';
import { splitLinkObjects } from './link-resolver';
import { live } from './read-query';
import type { Repository } from './repository';
import { fetchByKeys, fetchMultipleLinks, keyLookups, insertRows, replaceJoinRows, storedFields, toStoredRow, updateRows } from './upsert-io';
import { applyValues, BatchIndex, failed, lookupOf, recordKeys, type RecordState, type UpsertResult } from './upsert-plan';
import { writeMultipleLink } from './link-writes';

export type { UpsertResult } from './upsert-plan';

interface Prepared {
  index: number;
  id?: string;
  data: Record<string, unknown>;
  values: Map<FieldModel, unknown>;
  state?: RecordState;
  snapshot?: Record<string, unknown>;
  status?: 'Created' | 'Updated' | 'NotModified';
}

const message = (error: unknown) => (error instanceof ApiError ? error.message : 'The item could not be stored');

/** The stored fields of a record, as upsert results show them (no link names, no attributes). */
function entityOf(repo: Repository, record: Record<string, unknown>, access: UserAccess): ApiRecord {
  const out: Record<string, unknown> = {};
  for (const f of repo.readable) {
    if (f.key in record && (f.system || access.field(repo.model.name, f.name).read)) out[f.key] = record[f.key] ?? null;
  }
  return out as ApiRecord;
}

/** Ids that links of the run may point at: live records of each target, one query per target. */
async function liveTargets(trx: Knex.Transaction, repo: Repository, items: Prepared[]): Promise<Set<string>> {
  const { schema, database } = repo.env;
  const wanted = new Map<string, Set<string>>();
  for (const p of items) {
    for (const [field, value] of p.values) {
      if (field.type !== 'link' && field.type !== 'linkMultiple') continue;
      const ids = Array.isArray(value) ? value : value === null ? [] : [value];
      const set = wanted.get(field.target as string) ?? new Set<string>();
      ids.forEach((id) => set.add(String(id)));
      wanted.set(field.target as string, set);
    }
  }
  const found = new Set<string>();
  for (const [target, ids] of wanted) {
    const model = schema.entity(target) as EntityModel;
    const rows = await trx(model.table).select('id').whereIn('id', [...ids]).andWhere('deleted', live(database.dialect) as never);
    rows.forEach((r: { id: string }) => found.add(`${target}:${r.id}`));
  }
  return found;
}

/** The first link id of an item that names no live record (nor one this run creates). */
function missingLink(p: Prepared, existing: Set<string>, run: { entity: string; index: BatchIndex }): string | undefined {
  for (const [field, value] of p.values) {
    if (field.type !== 'link' && field.type !== 'linkMultiple') continue;
    for (const id of Array.isArray(value) ? value : value === null ? [] : [value]) {
      const inRun = field.target === run.entity && run.index.find({ id: String(id), unique: [], indexes: [] });
      if (!existing.has(`${field.target}:${id}`) && !inRun) return `${field.target} '${id}' not found (${field.key})`;
    }
  }
  return undefined;
}

/** As one-at-a-time processing would: a unique value another record holds fails the item (409 text). */
function assertNoCollision(index: BatchIndex, state: RecordState | undefined, record: Record<string, unknown>, model: EntityModel): void {
  const key = index.collision(state, record);
  if (!key) return;
  const what = key.startsWith('id:') ? 'id' : key.split(':')[1];
  throw new ApiError('CORE_UNIQUE_VIOLATION', `${model.name} with the same ${what} already exists`);
}

/**
 * Decides one item against the batch so far, exactly as processing the items one at a time
 * would; the SQL runs afterwards, set-based.
 */
async function decide(repo: Repository, ctx: RequestContext, access: UserAccess, p: Prepared, index: BatchIndex): Promise<void> {
  const { model } = repo;
  const scope = access.scope(model.name);
  const found = index.find(lookupOf(model, p.id, p.values));
  if (found === 'ambiguous') throw new ApiError('CORE_CONFLICT', 'The unique fields of the payload point at different records');
  const now = nowDateTime();
  if (found) {
    if (scope.edit === 'no' || (!found.isNew && scope.read === 'no')) throw new ApiError('CORE_FORBIDDEN', `Not allowed to edit ${model.name}`);
    if (!found.isNew) repo.guard.assertLevel(ctx, scope.edit, found.record as ApiRecord, 'edit');
    repo.assertWritable(p.values, found.record as ApiRecord);
    repo.guard.assertEditable(access, p.values, found.record as ApiRecord);
    assertNoCollision(index, found, { ...found.record, ...Object.fromEntries([...p.values].map(([f, v]) => [f.key, v])) }, model);
    const before = recordKeys(model, found.record);
    const changed = applyValues(found, p.values);
    if (changed) Object.assign(found.record, { modifiedAt: now, modifiedById: ctx.user?.id ?? null });
    p.status = changed ? 'Updated' : 'NotModified';
    index.reindex(found, before);
    found.items.push(p.index);
    p.state = found;
  } else {
    if (!scope.create) throw new ApiError('CORE_FORBIDDEN', `Not allowed to create ${model.name}`);
    const values = completeForCreate(model, p.values);
    repo.assertWritable(values, undefined);
    repo.guard.assertEditable(access, new Map([...values].filter(([f]) => f.key in p.data)), undefined);
    const record: Record<string, unknown> = { id: p.id ?? uuidv7() };
    for (const f of storedFields(model)) if (!f.system) record[f.key] = null;
    for (const f of model.fields) if (f.type === 'linkMultiple') record[f.key] = [];
    for (const [f, v] of values) record[f.key] = f.type === 'linkMultiple' ? [...new Set(v as string[])] : v;
    Object.assign(record, { createdAt: now, modifiedAt: now, createdById: ctx.user?.id ?? null, modifiedById: ctx.user?.id ?? null });
    Object.assign(record, { createdByActorId: ctx.actor?.id ?? null, modifiedByActorId: ctx.actor?.id ?? null });
    assertNoCollision(index, undefined, record, model);
    p.state = { id: record.id as string, record, isNew: true, dirty: new Set(values.keys()), items: [p.index] };
    p.status = 'Created';
    index.add(p.state);
  }
  p.snapshot = { ...p.state.record };
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
 * A new record whose insert was ignored: another request stored the same key first. Its items
 * are replayed, in order, as updates of that record; when no record holds its keys, the insert
 * failed for another reason, which is found out by inserting it alone.
 */
async function recoverLostInsert(trx: Knex.Transaction, repo: Repository, state: RecordState, items: Prepared[], failures: Map<RecordState, string>) {
  const [existing] = await fetchByKeys(trx, repo, lookupsOf(repo.model, state.record, items[0]?.id !== undefined));
  if (existing) {
    const next: RecordState = { id: existing.id as string, record: existing, isNew: false, dirty: new Set(), items: [] };
    const multi = repo.model.fields.filter((f) => f.type === 'linkMultiple' && items.some((p) => p.values.has(f)));
    for (const field of multi) existing[field.key] = (await fetchMultipleLinks(trx, repo.env.schema, repo.env.database.dialect, field, [next.id])).get(next.id) ?? [];
    for (const p of items) {
      p.status = applyValues(next, p.values) ? 'Updated' : 'NotModified';
      p.state = next;
      p.snapshot = { ...next.record };
    }
    return next;
  }
  try {
    await trx.transaction(async (sp) => void (await sp(repo.model.table).insert(toStoredRow(repo, state))));
    return state;
  } catch (error) {
    failures.set(state, message(await repo.translated(() => Promise.reject(error)).catch((e) => e)));
    return undefined;
  }
}

/** Writes the decided states: one insert and one update statement per chunk, join rows set-based. */
async function write(trx: Knex.Transaction, repo: Repository, ctx: RequestContext, decided: Prepared[], failures: Map<RecordState, string>) {
  const { model, env } = repo;
  const dialect = env.database.dialect;
  let states = [...new Set(decided.map((p) => p.state as RecordState))];
  const fresh = states.filter((s) => s.isNew);
  const stored = await insertRows(trx, dialect, model, fresh.map((s) => toStoredRow(repo, s)));
  for (const lost of fresh.filter((x) => !stored.has(x.id))) {
    const next = await recoverLostInsert(trx, repo, lost, decided.filter((p) => p.state === lost), failures);
    if (next && next !== lost) states = states.map((s) => (s === lost ? next : s));
  }
  const changed = states.filter((s) => !s.isNew && s.dirty.size > 0 && !failures.has(s));
  const columns = [...new Set(changed.flatMap((s) => [...s.dirty].filter((f) => f.column).map((f) => f.column as string)))];
  if (changed.length && columns.length) {
    const all = [...columns, 'modified_at', 'modified_by_id', 'modified_by_actor_id'];
    const rows = changed.map((s) => ({ ...toStoredRow(repo, s), modified_by_actor_id: ctx.actor?.id ?? null }));
    try {
      await trx.transaction((sp) => updateRows(sp, repo, rows, all));
    } catch {
      for (const [i, s] of changed.entries()) {
        await trx.transaction((sp) => updateRows(sp, repo, [rows[i]], all)).catch(async (error) => {
          failures.set(s, message(await repo.translated(() => Promise.reject(error)).catch((e) => e)));
        });
      }
    }
  } else if (changed.length) {
    const rows = changed.map((s) => ({ ...toStoredRow(repo, s), modified_by_actor_id: ctx.actor?.id ?? null }));
    await updateRows(trx, repo, rows, ['modified_at', 'modified_by_id', 'modified_by_actor_id']);
  }
  const ok = states.filter((s) => !failures.has(s));
  for (const field of model.fields.filter((f) => f.type === 'linkMultiple')) {
    const touched = ok.filter((s) => s.dirty.has(field));
    if (!touched.length) continue;
    if (field.join) await replaceJoinRows(trx, field, new Map(touched.map((s) => [s.id, s.record[field.key] as string[]])));
    else for (const s of touched) await writeMultipleLink(trx, env.schema, field, s.id, s.record[field.key] as string[], (await fetchMultipleLinks(trx, env.schema, dialect, field, [s.id])).get(s.id) ?? []);
  }
}

/** One run of consecutive items of one entity type, without link objects: set-based. */
async function upsertRun(repo: Repository, ctx: RequestContext, run: Prepared[], results: UpsertResult[]): Promise<void> {
  const { model, env } = repo;
  const access = await repo.guard.access(ctx);
  const dialect = env.database.dialect;
  const decided: Prepared[] = [];
  const failures = new Map<RecordState, string>();
  await repo.translated(() =>
    env.database.knex.transaction(async (trx) => {
      const index = new BatchIndex(model);
      const found = await fetchByKeys(trx, repo, keyLookups(model, run));
      const multi = model.fields.filter((f) => f.type === 'linkMultiple' && run.some((p) => p.values.has(f)));
      for (const field of multi) {
        const links = await fetchMultipleLinks(trx, env.schema, dialect, field, found.map((r) => r.id as string));
        for (const r of found) r[field.key] = links.get(r.id as string) ?? [];
      }
      for (const record of found) index.add({ id: record.id as string, record, isNew: false, dirty: new Set(), items: [] });
      const targets = await liveTargets(trx, repo, run);
      for (const p of run) {
        try {
          const missing = missingLink(p, targets, { entity: model.name, index });
          if (missing) throw new ApiError('CORE_INVALID_LINK', missing);
          await decide(repo, ctx, access, p, index);
          decided.push(p);
        } catch (error) {
          results[p.index] = failed(message(error));
        }
      }
      await write(trx, repo, ctx, decided, failures);
    }),
  );
  for (const p of decided) {
    const failure = failures.get(p.state as RecordState);
    results[p.index] = failure ? failed(failure) : { status: p.status as UpsertResult['status'], stored: true, entity: entityOf(repo, p.snapshot ?? {}, access) };
  }
}

/** An item with link objects goes through the single-record path (find-or-create needs it). */
async function upsertSingle(repo: Repository, ctx: RequestContext, payload: Record<string, unknown>): Promise<UpsertResult> {
  const { data } = splitLinkObjects(repo.model, payload);
  const values = repo.validate(Object.fromEntries(Object.entries(data).filter(([k]) => k !== 'id')), 'update');
  const id = typeof payload.id === 'string' ? payload.id : undefined;
  const [match] = await repo.env.database.knex.transaction(async (trx) => {
    const lookup = lookupOf(repo.model, id, values);
    const index = new BatchIndex(repo.model);
    for (const record of await fetchByKeys(trx, repo, keyLookups(repo.model, [{ id, values }]))) index.add({ id: record.id as string, record, isNew: false, dirty: new Set(), items: [] });
    const hit = index.find(lookup);
    if (hit === 'ambiguous') throw new ApiError('CORE_CONFLICT', 'The unique fields of the payload point at different records');
    return [hit?.record];
  });
  const access = await repo.guard.access(ctx);
  if (!match) {
    const created = await repo.create(ctx, payload);
    return { status: 'Created', stored: true, entity: entityOf(repo, created, access) };
  }
  const { id: _id, ...rest } = payload;
  const updated = await repo.update(ctx, match.id as string, rest);
  const status = updated.modifiedAt === match.modifiedAt ? 'NotModified' : 'Updated';
  return { status, stored: true, entity: entityOf(repo, updated, access) };
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
  let run: Prepared[] = [];
  let runRepo: Repository | undefined;
  const flush = async () => {
    if (runRepo && run.length) await upsertRun(runRepo, ctx, run, results);
    run = [];
  };
  for (const [index, item] of items.entries()) {
    const { entity, payload } = (item ?? {}) as { entity?: unknown; payload?: unknown };
    const repo = typeof entity === 'string' ? lookup(entity) : undefined;
    if (repo !== runRepo) await flush();
    runRepo = repo;
    try {
      if (typeof entity !== 'string') throw new ApiError('CORE_VALIDATION_FAILED', 'Each item needs an entity name');
      if (!repo) throw new ApiError('CORE_NOT_FOUND', `Unknown entity type '${entity}'`);
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new ApiError('CORE_VALIDATION_FAILED', 'payload must be an object');
      const body = payload as Record<string, unknown>;
      const { data, objects } = splitLinkObjects(repo.model, body);
      if (objects.size || hasWriteHooks(repo)) {
        await flush();
        results[index] = await upsertSingle(repo, ctx, body).catch((error) => {
          if (error instanceof ApiError) return failed(error.message);
          throw error;
        });
        continue;
      }
      const { id, ...rest } = data;
      if (id !== undefined && id !== null && !isValidId(id)) throw new ApiError('CORE_INVALID_ID', 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -');
      run.push({ index, id: (id ?? undefined) as string | undefined, data: rest, values: repo.validate(rest, 'update') });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results[index] = failed(error.message);
    }
  }
  await flush();
  return results;
}
