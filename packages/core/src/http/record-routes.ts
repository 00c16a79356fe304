import { createHash } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import type { ApiRecord } from '../declarations';
import { ApiError, assertKnownKeys, assertStringList, objectBody } from '../errors';
import type { Generation } from '../generations';
import type { Repository } from '../records/repository';
import { etagOf, matchesVersion, preconditionFailed, versionOf } from '../records/version';
import { parseListParams, queryOf } from './list-params';
import { idempotent } from './idempotency';
import { requestContext } from './request-context';
import { answersAsExpressWould, sendUnhashed, writeJson } from './send-json';
import { toHandler } from './to-handler';

export type RepositoryLookup = (entity: string) => Repository | undefined;

/** The repository named by `:entity`, or 404. */
export function repositoryFor(lookup: RepositoryLookup, name: unknown): Repository<ApiRecord> {
  if (typeof name !== 'string' || name === '') {
    throw new ApiError('CORE_VALIDATION_FAILED', 'entityName is required', {
      details: { issues: [{ path: ['entityName'], code: 'required', message: 'entityName must name an entity type' }] },
    });
  }
  const repository = lookup(name);
  if (!repository) {
    throw new ApiError('CORE_NOT_FOUND', `Unknown entity type '${String(name)}'`, { details: { entity: String(name) } });
  }
  return repository;
}

const bodyObject = (req: Request): Record<string, unknown> => objectBody(req.body);

/**
 * The preconditions of a write of the record `:id` (CONTRACT §16): `If-Match` and `If-None-Match`
 * as sent. The write judges them against the record it reads, after the rights and the body (RFC
 * 9110 §13.2.1): a version it names there is 412 `CORE_PRECONDITION_FAILED` and nothing is written.
 */
export const preconditionsOf = (req: Request): { ifMatch?: string; ifNoneMatch?: string } => ({ ifMatch: req.get('if-match'), ifNoneMatch: req.get('if-none-match') });

/**
 * Sends a record read or written through a repository as the answer, with its version as a strong
 * `ETag` (CONTRACT §16: single reads, creates, updates), never a hash of the body. Plugins answer
 * the records their routes create with it too (another answer goes as it is).
 */
export function sendRecord(res: Response, record: object): void {
  const version = versionOf(record);
  if (version === undefined) {
    res.json(record);
    return;
  }
  versioned(res, version);
  // With the ETag set, `res.json` (where it must be used) adds none of its own either.
  sendUnhashed(res, record);
}

/**
 * Sends a list as `res.json` would, with the ETag the app's `etag` setting makes (Express's weak
 * hash of the text, by default), the text made bytes once, for the hash and the socket: a page of
 * records is the largest answer a read has.
 */
export function sendList(res: Response, list: object): void {
  if (!answersAsExpressWould(res)) {
    res.json(list);
    return;
  }
  const text = JSON.stringify(list);
  const setting: unknown = res.app.get('etag');
  const expressTag = setting === true || setting === 'weak' || setting === 'strong';
  if (res.hasHeader('ETag') || !expressTag) {
    // One set before stays; else the app's own function, or none (`false`).
    const fn: unknown = res.hasHeader('ETag') ? undefined : res.app.get('etag fn');
    const tag: unknown = typeof fn === 'function' ? fn(text, 'utf8') : undefined;
    if (typeof tag === 'string') res.setHeader('ETag', tag);
    writeJson(res, text);
    return;
  }
  // Express's own ETag (`true` or `'weak'`, the default, or `'strong'`): the length in hex and the
  // SHA-1 of the UTF-8 bytes.
  const bytes = Buffer.from(text, 'utf8');
  const tag = `"${bytes.length.toString(16)}-${createHash('sha1').update(bytes).digest('base64').substring(0, 27)}"`;
  res.setHeader('ETag', setting === 'strong' ? tag : `W/${tag}`);
  writeJson(res, bytes);
}

/**
 * Sends the answer of a bulk write (upsert, upsertAsync, entityMassUpdate) as `res.json` would,
 * but without Express's `ETag`: no request is made conditional on the answer of a write, and
 * hashing the largest answer a write has (a 1,000-item upsert's: a copy of its text into bytes,
 * then SHA-1 over them) cost that batch 2–3 % of the server's time. The text goes to the socket
 * as it is, encoded once. Where the answer must go through `res.json` (see
 * `answersAsExpressWould`: an idempotency key's wrapper, the app's JSON settings), it does, and
 * Express adds its ETag.
 */
export const sendBulkAnswer = (res: Response, answer: object): void => sendUnhashed(res, answer);

/**
 * The headers of an answer that shows (or, with 304, stands for) a record at `version`: its `ETag`
 * (the `Vary` and `Cache-Control` of every authenticated answer are set before the routes:
 * `privateAnswers`).
 */
function versioned(res: Response, version: number): void {
  res.setHeader('ETag', etagOf(version));
}

/**
 * A read's preconditions (RFC 9110 §13.2.2): `If-Match` naming none of the record's versions is
 * 412, as for a write; else `If-None-Match` naming its version is 304 (answers whether it was).
 */
function answeredByPreconditions(req: Request, res: Response, { record, entity }: { record: ApiRecord; entity: string }): boolean {
  const version = versionOf(record);
  if (version === undefined) return false;
  const ifMatch = req.get('if-match');
  if (ifMatch !== undefined && !matchesVersion(ifMatch, { version, weak: false })) throw preconditionFailed(entity, record.id);
  const ifNoneMatch = req.get('if-none-match');
  if (ifNoneMatch === undefined || !matchesVersion(ifNoneMatch, { version, weak: true })) return false;
  versioned(res, version);
  res.status(304).end();
  return true;
}

/** List, read, create, update (PATCH and PUT), delete and restore of records. */
export function mountRecordRoutes(router: Router, lookup: RepositoryLookup, generation: Generation): void {
  router.post(
    '/entityRestore',
    toHandler(async (req, res) => {
      const body = bodyObject(req);
      assertKnownKeys(body, ['entityName', 'ids'], 'an entityRestore body');
      const { entityName, ids } = body;
      assertStringList(ids, 'ids', 'ids must be a list of record ids');
      res.json(await repositoryFor(lookup, entityName).restore(requestContext(req), ids as string[]));
    }),
  );
  router.get(
    '/entityRelation',
    toHandler(async (req, res) => {
      const query = queryOf(req);
      const { entityName, id, link } = query;
      for (const [name, value] of Object.entries({ entityName, id, link })) {
        if (typeof value !== 'string' || value === '') throw new ApiError('CORE_INVALID_QUERY', `${name} is required`);
      }
      const repository = repositoryFor(lookup, entityName);
      sendList(res, await repository.findLinked(requestContext(req), { id: id as string, link: link as string }, parseListParams(query)));
    }),
  );
  router.get(
    '/:entity',
    toHandler(async (req, res) => {
      const repository = repositoryFor(lookup, req.params.entity);
      sendList(res, await repository.find(requestContext(req), parseListParams(queryOf(req))));
    }),
  );
  router.get(
    '/:entity/:id',
    toHandler(async (req, res) => {
      const repository = repositoryFor(lookup, req.params.entity);
      const { select } = parseListParams(queryOf(req));
      const record = await repository.get(requestContext(req), req.params.id as string, { select });
      if (!answeredByPreconditions(req, res, { record, entity: repository.model.name })) sendRecord(res, record);
    }),
  );
  if (generation.linkRoutes) {
    router.get(
      '/:entity/:id/:link',
      toHandler(async (req, res) => {
        const repository = repositoryFor(lookup, req.params.entity);
        const params = parseListParams(queryOf(req));
        sendList(res, await repository.findLinked(requestContext(req), { id: req.params.id as string, link: req.params.link as string }, params));
      }),
    );
  }
  router.post(
    '/:entity',
    idempotent,
    toHandler(async (req, res) => {
      const repository = repositoryFor(lookup, req.params.entity);
      sendRecord(res, await repository.create(requestContext(req), bodyObject(req)));
    }),
  );
  const update = toHandler(async (req, res) => {
    const repository = repositoryFor(lookup, req.params.entity);
    sendRecord(res, await repository.updateIf(requestContext(req), { id: req.params.id as string, body: bodyObject(req), ...preconditionsOf(req) }));
  });
  router.patch('/:entity/:id', update);
  router.put('/:entity/:id', update);
  router.delete(
    '/:entity/:id',
    toHandler(async (req, res) => {
      const repository = repositoryFor(lookup, req.params.entity);
      const permanently = ['true', '1'].includes(String(req.get('permanently') ?? '').toLowerCase());
      await repository.delete(requestContext(req), req.params.id as string, { permanently, ...preconditionsOf(req) });
      res.json(true);
    }),
  );
}
