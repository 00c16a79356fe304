import type { Request, Response, Router } from 'express';
import type { UserAccess } from '../auth/access-control';
import type { AuthOptions, AuthService } from '../auth/auth-service';
import type { ContextUser } from '../context';
import { listen, listeningTimestamp } from '../events/listening';
import { recordStream } from '../events/stream';
import type { SubscriptionOptions, Subscriptions } from '../events/subscriptions';
import { ApiError, assertKnownKeys, objectBody } from '../errors';
import { requestSession, requestToken } from './auth-routes';
import { hashToken } from '../auth/auth-service';
import { queryOf } from './list-params';
import { repositoryFor, type RepositoryLookup } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';
import { recordWithinRules } from '../records/row-rules';

/** What the change routes read: the repositories, the event streams, and who a request acts for. */
export interface EventRouteParts {
  lookup: RepositoryLookup;
  subscriptions: Subscriptions;
  auth: AuthService;
  resolveUser?: AuthOptions['resolveUser'];
  accessFor: (user: ContextUser | undefined) => Promise<UserAccess>;
  /** `GET /data/publicData.json`: core's `dataTimestamp` and what plugins add. */
  publicData: () => Promise<Record<string, unknown>>;
}

/**
 * A filter of the stream as a set (empty when absent): a comma list, repeated or not. A parameter
 * repeated more than the parser's array limit comes as an object keyed 0, 1, …: the same list.
 * Anything else (`entityName[x]=…`) is 400, never a filter silently left out.
 */
function listParam(value: unknown, name: string): Set<string> {
  if (value === undefined) return new Set();
  const repeated = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).every((k) => /^\d+$/.test(k)) ? Object.values(value) : value;
  const items = Array.isArray(repeated) ? repeated : [repeated];
  if (!items.every((item): item is string => typeof item === 'string')) throw new ApiError('CORE_INVALID_QUERY', `${name} must be a comma-separated list`);
  return new Set(items.flatMap((item) => item.split(',')).map((s) => s.trim()).filter(Boolean));
}

/**
 * The seq a reconnecting client last saw: the `Last-Event-ID` header, or the `lastEventId` query
 * parameter of clients that cannot send headers. Empty is none (an event stream resets it so).
 * Anything but digits is 400 before the stream opens: starting live instead would drop every
 * change the client missed without a word. A number past every change starts live (`subscribe`).
 */
function lastEventId(req: Request, query: Record<string, unknown>): number | undefined {
  const header = req.get('last-event-id');
  const raw = header ?? query.lastEventId;
  if (raw === undefined) return undefined;
  const value = typeof raw === 'string' ? raw.trim() : undefined;
  if (value === '') return undefined;
  if (value === undefined || !/^\d+$/.test(value)) throw new ApiError('CORE_INVALID_QUERY', `${header === undefined ? 'lastEventId' : 'Last-Event-ID'} must be the id of an event`);
  return Number(value);
}

/** `GET /events`: server-sent events of the changes the caller may see (CONTRACT §16). */
function eventStream(parts: EventRouteParts) {
  return toHandler(async (req: Request, res: Response) => {
    const query = queryOf(req);
    const ctx = requestContext(req);
    const { user } = ctx;
    const entities = listParam(query.entityName, 'entityName');
    const ids = listParam(query.id, 'id');
    const after = lastEventId(req, query);
    // An entity type the instance does not have is 404, as on every route (before the stream opens).
    for (const name of entities) repositoryFor(parts.lookup, name);
    res.status(200).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    // HEAD: the headers a GET gets, and nothing to stream (no body is ever sent: a subscription
    // would hold the connection without an answer).
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const drained = () =>
      new Promise<void>((resolve) => {
        if (res.closed) return resolve();
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    const sink = { write: (chunk: string) => void res.write(chunk), buffered: () => res.writableLength, drained, closed: () => res.closed, end: () => res.end(), destroy: () => res.destroy() };
    // Every heartbeat asks again who the request acts for: a revoked token ends the stream.
    const access = () => requestSession(parts.auth, { req, resolveUser: parts.resolveUser }).then((s) => parts.accessFor(s.user), () => undefined);
    const withinRules = (change: { entityType: string; recordId: string }) => {
      const repo = parts.lookup(change.entityType);
      return repo && recordWithinRules(repo, ctx, change.recordId);
    };
    // The cache events that may change what this subscriber sees: its token's, its user's (or the
    // acting admin's), any role's.
    const token = requestToken(req);
    const tokenHash = token === undefined ? undefined : hashToken(token);
    const concerns: SubscriptionOptions['concerns'] = (event) =>
      event.kind === 'role' || (event.kind === 'token' ? tokenHash === undefined || event.id === tokenHash : event.id === user?.id || event.id === ctx.actor?.id);
    const end = await parts.subscriptions.subscribe(sink, { user, concerns, entities, ids, after, access, withinRules });
    // The client may have gone while the stream was being set up.
    if (res.closed) return end();
    res.on('close', () => end());
    // Sent once the subscription listens (after any replay): every change after it reaches the client.
    if (!res.writableEnded) res.write(': connected\n\n');
  });
}

/** The change routes of one generation: the stream of a record, listening, server-sent events. */
export function mountEventRoutes(router: Router, parts: EventRouteParts): void {
  const { lookup } = parts;
  router.get('/events', eventStream(parts));
  router.get(
    '/entityStream',
    toHandler(async (req, res) => {
      const { entityName, id, offset, maxSize } = queryOf(req);
      // Both are query parameters: one code for either missing.
      if (typeof entityName !== 'string' || entityName === '') throw new ApiError('CORE_INVALID_QUERY', 'entityName is required');
      if (typeof id !== 'string' || id === '') throw new ApiError('CORE_INVALID_QUERY', 'id is required');
      res.json(await recordStream(repositoryFor(lookup, entityName), requestContext(req), { id, offset, maxSize }));
    }),
  );
  // Under both bases, as every route the spec does not name for one generation (CONTRACT §14).
  router.get(
    '/:entity/:id/stream',
    toHandler(async (req, res) => {
      const { offset, maxSize } = queryOf(req);
      res.json(await recordStream(repositoryFor(lookup, req.params.entity), requestContext(req), { id: req.params.id as string, offset, maxSize }));
    }),
  );
  router.post(
    '/startEntityListening',
    toHandler(async (req, res) => {
      const body = objectBody(req.body);
      assertKnownKeys(body, ['entityName', 'entityId'], 'a startEntityListening body');
      if (typeof body.entityId !== 'string' || body.entityId === '') throw new ApiError('CORE_VALIDATION_FAILED', 'entityId is required', { details: { issues: [{ path: ['entityId'], code: 'required', message: 'entityId is required' }] } });
      res.json(await listen(repositoryFor(lookup, body.entityName), requestContext(req), body.entityId));
    }),
  );
}

/** The routes at the root that need no token: a record's listening endpoint and the public data. */
export function mountPublicEventRoutes(root: Router, parts: EventRouteParts): void {
  root.get(
    '/listening/entity/:entity/:file',
    toHandler(async (req, res) => {
      const file = req.params.file as string;
      if (!file.endsWith('.json')) throw new ApiError('CORE_ROUTE_NOT_FOUND', `No route GET ${req.path}`);
      res.set('Cache-Control', 'no-store').json(await listeningTimestamp(repositoryFor(parts.lookup, req.params.entity), file.slice(0, -'.json'.length)));
    }),
  );
  root.get(
    '/data/publicData.json',
    toHandler(async (_req, res) => {
      res.set('Cache-Control', 'no-store').json(await parts.publicData());
    }),
  );
}
