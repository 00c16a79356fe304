import type { RequestContext } from '../context';
import { ApiError } from '../errors';
import { linkNamed, type LinkDelta } from '../records/link-delta';
import type { Repository } from '../records/repository';
import { publicResult, upsertItems, type UpsertCall } from '../records/upsert/upsert';
import { derivedUuidv7 } from '../util/uuid';
import { JobInterrupted, type JobHandler, type JobRun } from './job-service';

type Lookup = (entity: string) => Repository | undefined;

/** Items per chunk of an upsert job. */
const UPSERT_CHUNK = 500;
/** Results are saved at most this often (they grow with the job; saving them per chunk would cost O(n²)). */
const CHECKPOINT_MS = 2000;

/**
 * `upsertAsync`: the items in chunks. Results are saved with the progress at checkpoints; a job
 * that runs again (its process died) resumes after the last checkpoint. Items done after it are
 * upserted again, which stores nothing twice: the record an item creates gets an id made from the
 * job's id and the item's position, so an item whose record exists already updates it (and still
 * counts as `Created`); an item that updated a record finds it by its keys again (`NotModified`).
 */
export function upsertJob(lookup: Lookup): JobHandler {
  return async (run) => {
    const items = Array.isArray(run.payload.items) ? (run.payload.items as unknown[]) : [];
    const results = Array.isArray(run.partial) ? [...(run.partial as unknown[])] : [];
    let done = Math.min(run.processed, results.length);
    results.length = done;
    let saved = Date.now();
    const resumedAt = done;
    while (done < items.length) {
      if (run.stopping()) {
        await run.checkpoint(done, Math.floor((done * 100) / items.length), results);
        throw new JobInterrupted();
      }
      // Every chunk runs with the user's rights as they are now; one taken away (or the user
      // deactivated) since the last chunk ends the job with the results of the chunks done.
      if (done > resumedAt) await recheckUser(run, () => run.checkpoint(done, Math.floor((done * 100) / items.length), results));
      const chunk = items.slice(done, done + UPSERT_CHUNK);
      const first = done;
      const newIds = (index: number) => derivedUuidv7(run.id, first + index);
      results.push(...(await upsertItems({ lookup, ctx: run.ctx, newIds }, chunk)).map(publicResult));
      done += chunk.length;
      if (Date.now() - saved >= CHECKPOINT_MS && done < items.length) {
        await run.checkpoint(done, Math.floor((done * 100) / items.length), results);
        saved = Date.now();
      }
      // Let requests in between chunks (SQLite's driver is synchronous and would hold the loop).
      await new Promise((resolve) => setImmediate(resolve));
    }
    return results;
  };
}

/** `run.recheckUser()`; when it fails, `save` keeps what was done before the error ends the job. */
async function recheckUser(run: JobRun, save: () => Promise<void>): Promise<void> {
  try {
    await run.recheckUser();
  } catch (error) {
    await save();
    throw error;
  }
}

export interface MassUpdateResult {
  updated: number;
  errors: { id: string; code: string; message: string }[];
}

/** The same values, and the same links added and removed (`{link: [ids]}`), for every listed record. */
export interface MassUpdate {
  ids: readonly string[];
  values: Record<string, unknown>;
  addLinks?: Record<string, string[]>;
  removeLinks?: Record<string, string[]>;
}

/** The deltas of `addLinks` and `removeLinks`: one per link, with the ids it adds and those it removes. */
function linkDeltas(repo: Repository, { addLinks = {}, removeLinks = {} }: Pick<MassUpdate, 'addLinks' | 'removeLinks'>): LinkDelta[] {
  return [...new Set([...Object.keys(addLinks), ...Object.keys(removeLinks)])].map((link) => ({ field: linkNamed(repo.model, link), add: addLinks[link], remove: removeLinks[link] }));
}

/**
 * Updates the listed records with the same values and the same links added and removed,
 * set-based: the batch path of upsert with its rules, in update mode (an id that names no record
 * fails), each record's change logged once (`Relate` or `Unrelate` when only links change). Each
 * failure is reported by id. `faultsFailCall`: a request's (see `UpsertCall`).
 */
export async function massUpdate(
  repo: Repository,
  ctx: RequestContext,
  { ids, values, faultsFailCall, ...links }: MassUpdate & Pick<UpsertCall, 'faultsFailCall'>,
): Promise<MassUpdateResult> {
  // An id listed twice is one record, updated once.
  const targets = [...new Set(ids)];
  const items = targets.map((id) => ({ entity: repo.model.name, payload: { ...values, id } }));
  const results = await upsertItems({ lookup: () => repo, ctx, mode: 'update', links: linkDeltas(repo, links), faultsFailCall }, items);
  const errors: MassUpdateResult['errors'] = [];
  results.forEach((r, i) => r.status === 'Failed' && errors.push({ id: targets[i], code: r.code ?? 'CORE_INTERNAL', message: r.message ?? '' }));
  return { updated: targets.length - errors.length, errors };
}

/** The ids a `where` selects, read page by page with the caller's rights. */
export async function idsMatching(repo: Repository, ctx: RequestContext, where: unknown[]): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await repo.find(ctx, { where, select: ['id'], offset, maxSize: 1000, collectionOnly: true });
    ids.push(...(page.list ?? []).map((r) => r.id));
    if ((page.list ?? []).length < 1000) return ids;
  }
}

/** A large `entityMassUpdate` (over the sync limit, or by `where`). */
export function massUpdateJob(lookup: Lookup): JobHandler {
  return async (run) => {
    const { entityName, ids, where, values, addLinks, removeLinks } = run.payload as Omit<MassUpdate, 'ids'> & { entityName: string; ids?: string[]; where?: unknown[] };
    const repo = lookup(entityName);
    if (!repo) throw new ApiError('CORE_NOT_FOUND', `Unknown entity type '${entityName}'`);
    // Resumed after a stop: the records before the checkpoint are done, and the records to do are
    // those chosen at the start (a `where` read again could match others by now).
    const saved = run.processed > 0 ? (run.partial as (MassUpdateResult & { targets?: string[] }) | null) : null;
    const targets = saved?.targets ?? [...new Set(ids ?? (await idsMatching(repo, run.ctx, where ?? [])))];
    const result: MassUpdateResult = { updated: saved?.updated ?? 0, errors: [...(saved?.errors ?? [])] };
    const from = saved ? run.processed : 0;
    for (let done = from; done < targets.length; done += MASS_UPDATE_CHUNK) {
      if (run.stopping()) {
        await run.checkpoint(done, Math.floor((done * 100) / targets.length), { ...result, targets });
        throw new JobInterrupted();
      }
      // As an upsert job's chunks: each step with the user's rights as they are now. The job ends
      // here if they are gone, so its result needs no targets to resume from.
      if (done > from) await recheckUser(run, () => run.checkpoint(done, Math.floor((done * 100) / targets.length), { ...result }));
      const part = await massUpdate(repo, run.ctx, { ids: targets.slice(done, done + MASS_UPDATE_CHUNK), values, addLinks, removeLinks });
      result.updated += part.updated;
      result.errors.push(...part.errors);
    }
    return result;
  };
}

/** Records per step of a mass update job: between steps it may stop (and resume from there). */
const MASS_UPDATE_CHUNK = 200;
