import type { Request, Router } from 'express';
import type { RequestContext } from '../context';
import { isLinkField } from '../definition/model';
import { ApiError, assertKnownKeys, assertStringList, issuesUnder, objectBody, unknownKeys } from '../errors';
import type { Generation } from '../generations';
import { massUpdate } from '../jobs/bulk-jobs';
import { checkedLinkIds } from '../records/link-delta';
import type { JobService } from '../jobs/job-service';
import { publicResult, upsertItems } from '../records/upsert/upsert';
import type { Repository } from '../records/repository';
import type { RepositoryLookup } from './record-routes';
import { repositoryFor, sendBulkAnswer } from './record-routes';
import { idempotent } from './idempotency';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** `entityMassUpdate` with more ids than this (or with `where`) runs as a job. */
export const MASS_UPDATE_SYNC_LIMIT = 200;

const invalid = (message: string, ...path: string[]) =>
  new ApiError('CORE_VALIDATION_FAILED', message, { details: { issues: [{ path, code: 'invalid_type', message }] } });

/** `{link: [ids]}` of an entityMassUpdate: links of the entity type, lists of ids (400 otherwise). */
function linkChanges(repo: Repository, value: unknown, path: string): Record<string, string[]> | undefined {
  if (value === undefined) return undefined;
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject) throw invalid(`${path} must be an object of links and lists of ids`, path);
  for (const [link, ids] of Object.entries(value)) {
    const field = repo.model.field.get(link);
    if (!field || field.system || !isLinkField(field)) throw issuesUnder(unknownKeys([link], { noun: 'link', where: `of ${repo.model.name}` }), [path]);
    if (!Array.isArray(ids)) throw invalid(`${path}.${link} must be a list of ids`, path, link);
    checkedLinkIds(field, { ids, adding: path === 'addLinks', path: [path, link] });
  }
  return value as Record<string, string[]>;
}

/**
 * A link is changed one way per request: by its value in `values` (`categoriesIds`, or link
 * objects under `categories`) or by `addLinks`/`removeLinks`, not both, as neither could be
 * honoured whole (400).
 */
function assertOneWayPerLink(repo: Repository, values: object, deltas: { addLinks?: Record<string, string[]>; removeLinks?: Record<string, string[]> }) {
  for (const link of new Set([...Object.keys(deltas.addLinks ?? {}), ...Object.keys(deltas.removeLinks ?? {})])) {
    const field = repo.model.field.get(link);
    const key = [field?.key, link].find((k) => k !== undefined && k in values);
    if (key === undefined) continue;
    const message = `values.${key} and addLinks/removeLinks.${link} change the same link: give one of them`;
    throw new ApiError('CORE_VALIDATION_FAILED', message, { details: { issues: [{ path: ['values', key], code: 'conflict', message }] } });
  }
}

/** The parts of an entityMassUpdate body, checked (400 otherwise): which records, and what to change. */
function massUpdateBody(repo: Repository, body: Record<string, unknown>) {
  assertKnownKeys(body, ['entityName', 'ids', 'where', 'values', 'addLinks', 'removeLinks'], 'an entityMassUpdate body');
  const { ids, where } = body;
  const addLinks = linkChanges(repo, body.addLinks, 'addLinks');
  const removeLinks = linkChanges(repo, body.removeLinks, 'removeLinks');
  const values = body.values ?? (addLinks || removeLinks ? {} : undefined);
  if (typeof values !== 'object' || values === null || Array.isArray(values)) throw invalid('values must be an object of fields', 'values');
  if ('id' in values) throw new ApiError('CORE_READ_ONLY_FIELD', 'id cannot be changed', { details: { issues: [{ path: ['values', 'id'], code: 'read_only', message: 'id cannot be changed' }] } });
  if (ids !== undefined) assertStringList(ids, 'ids', 'ids must be a list of ids');
  if (where !== undefined && !Array.isArray(where)) throw invalid('where must be a list of conditions', 'where');
  if ((ids === undefined) === (where === undefined)) throw invalid('give either ids or where', 'ids');
  assertOneWayPerLink(repo, values, { addLinks, removeLinks });
  return { ids: ids as string[] | undefined, where: where as unknown[] | undefined, values: values as Record<string, unknown>, addLinks, removeLinks };
}

/** The body of an upsert: an array of `{entity, payload}` items. */
function upsertBody(req: Request): unknown[] {
  if (!Array.isArray(req.body)) {
    throw new ApiError('CORE_VALIDATION_FAILED', 'The body must be an array of {entity, payload} items', {
      details: { issues: [{ path: [], code: 'invalid_type', message: 'expected an array' }] },
    });
  }
  return req.body as unknown[];
}

/**
 * The context of a bulk request: its answers carry no records, so `With-Meta` and `language`
 * shape nothing (and cost nothing) in the records it writes.
 */
function bulkContext(req: Request): RequestContext {
  const ctx = requestContext(req);
  ctx.withMeta = false;
  ctx.language = undefined;
  return ctx;
}

interface BulkRouteParts {
  lookup: RepositoryLookup;
  /** Runs `upsertAsync` and the mass updates too large to answer at once. */
  jobs: JobService;
  generation: Generation;
  /** Items a synchronous upsert takes at most; more are 413 (upsertAsync takes any number). */
  maxUpsertItems: number;
}

/** 413 for a synchronous upsert of more items than the instance takes at once. */
function assertUpsertSize(items: readonly unknown[], maxUpsertItems: number): void {
  if (items.length <= maxUpsertItems) return;
  throw new ApiError('CORE_PAYLOAD_TOO_LARGE', `An upsert takes at most ${maxUpsertItems} items, not ${items.length}; send more through upsertAsync`, {
    details: { maxUpsertItems, items: items.length },
  });
}

/** Upsert (sync and async) and mass update routes; the same in both generations. */
export function mountBulkRoutes(router: Router, { lookup, jobs, generation, maxUpsertItems }: BulkRouteParts): void {
  const upsert = toHandler(async (req, res) => {
    const items = upsertBody(req);
    assertUpsertSize(items, maxUpsertItems);
    sendBulkAnswer(res, (await upsertItems({ lookup, ctx: bulkContext(req), faultsFailCall: true }, items)).map(publicResult));
  });
  for (const { path } of generation.upsertPaths) router.post(path, idempotent, upsert);

  router.post(
    '/upsertAsync',
    idempotent,
    toHandler(async (req, res) => {
      const items = upsertBody(req);
      sendBulkAnswer(res, { jobId: await jobs.enqueue('upsert', { items }, requestContext(req)) });
    }),
  );

  const mass = toHandler(async (req, res) => {
    const body = objectBody(req.body, 'An entityMassUpdate body');
    const repo = repositoryFor(lookup, body.entityName);
    const ctx = bulkContext(req);
    await repo.guard.scope(ctx, 'edit');
    const { ids, where, ...change } = massUpdateBody(repo, body);
    // What is wrong with a field is named under `values`, where the body has it.
    await repo.assertUpdateBody(ctx, { body: change.values, links: [...Object.keys(change.addLinks ?? {}), ...Object.keys(change.removeLinks ?? {})] }).catch((error: unknown) => {
      throw issuesUnder(error, ['values']);
    });
    // A bad condition is 400 now, not a failed job later: reading one id checks it.
    if (where !== undefined) await repo.find(ctx, { where, select: ['id'], maxSize: 1, collectionOnly: true });
    if (ids === undefined || ids.length > MASS_UPDATE_SYNC_LIMIT) {
      sendBulkAnswer(res, { jobId: await jobs.enqueue('massUpdate', { entityName: repo.model.name, ids, where, ...change }, ctx) });
      return;
    }
    sendBulkAnswer(res, await massUpdate(repo, ctx, { ids, ...change, faultsFailCall: true }));
  });
  router.post('/entityMassUpdate', idempotent, mass);
  router.patch('/entityMassUpdate', idempotent, mass);
}
