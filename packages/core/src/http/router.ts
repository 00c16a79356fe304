import express, { type RequestHandler, type Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { AuthOptions, AuthService } from '../auth/auth-service';
import type { RequestContext } from '../context';
import { ApiError } from '../errors';
import { GENERATIONS, type Generation, type GenerationName } from '../generations';
import type { RootRouteInstaller, RouteInstaller } from '../plugin';
import { cookiePath, identifyBeforeBody, mountSessionRoutes, requireToken, type SessionParts } from './auth-routes';
import { jsonBody } from './body';
import { errorHandler, type Logger } from './error-handler';
import { guardMount, refuseForeignBody } from './mount-guard';
import { requestIdHeader } from './request-id';
import { mountRecordRoutes, type RepositoryLookup } from './record-routes';
import { mountBulkRoutes } from './bulk-routes';
import type { JobService } from '../jobs/job-service';
import { requestContext } from './request-context';
import { requestOptions, type RequestOptionsParts } from './request-options';
import { mountAttributeRoutes } from './attribute-routes';
import { mountLinkRoutes } from './link-routes';
import { mountEventRoutes, mountPublicEventRoutes, type EventRouteParts } from './event-routes';
import { mountJobRoutes } from './job-routes';
import { mountWebhookRoutes, type WebhookRouteParts } from './webhook-routes';
import type { AttributeEndpoints } from '../attributes/endpoints';
import { toHandler } from './to-handler';
import { series } from './series';
import { dispatchByFirstSegment } from './first-segment';
import { queryOf } from './list-params';
import type { Traffic } from './traffic';
import { ConcurrencyLimit } from '../util/concurrency-limit';
import type { IdempotencyKeys } from '../idempotency/idempotency-keys';
import { provideIdempotency } from './idempotency';
import { privateAnswers } from './private-answers';

export interface RouterParts {
  ready: () => Promise<void>;
  auth: AuthService;
  session: SessionParts;
  repository: RepositoryLookup;
  metadata: (ctx: RequestContext) => Promise<unknown>;
  /** The OpenAPI document as JSON text, its `servers` entry for the path the router is mounted at. */
  openapi: (mountPath: string) => string;
  /** The path generations served; default both. */
  generations?: readonly GenerationName[];
  /** Whether `/apidocs/` and `/apidocs/openapi.json` are served; default true. */
  apidocs?: boolean;
  /** The host's own sign-in, trusted (option `auth.resolveUser`). */
  resolveUser?: AuthOptions['resolveUser'];
  jobs: JobService;
  routes: RouteInstaller[];
  publicRoutes: RouteInstaller[];
  /** The simple attribute endpoints. */
  attributes: AttributeEndpoints;
  /** Languages for the `language` header, and plugins' `onRequest` hooks. */
  request: RequestOptionsParts;
  /** Plugin routes at the root (public links), before the bases. */
  rootRoutes?: RootRouteInstaller[];
  maxBodySize: string | number;
  /** The largest `maxSize` of a list (and of a page of a job's result). */
  maxListSize?: number;
  /** Items a synchronous upsert takes at most (more: 413). */
  maxUpsertItems: number;
  /** Requests in flight, and the refusal of new ones once the instance closes. */
  traffic: Traffic;
  /** The change log's routes: streams, listening, server-sent events, public data. */
  events: EventRouteParts;
  /** Redelivery of webhook deliveries. */
  webhooks: WebhookRouteParts;
  /** `Idempotency-Key`: the answers kept per user and key. */
  idempotency: IdempotencyKeys;
  /** How many bodies over 1 MiB are read and handled at once, and how many more may wait. */
  largeBodies: { concurrency: number; queue: number };
  /** Paths (below the base) whose bodies another parser reads (multipart). */
  rawBodyPaths?: (path: string) => boolean;
  logger?: Logger;
  /** Database errors met outside repositories (sign-in, plugins) → API errors. */
  translateError?: (error: unknown) => ApiError | undefined;
}

/** One generation's routes; mounted at `/api` (A) and `/api/v1` (B) from the same code. */
function generationRouter(generation: Generation, { parts, largeBodies }: { parts: RouterParts; largeBodies: ConcurrencyLimit }): RequestHandler {
  const router = express.Router();
  const setGeneration: RequestHandler = (req, _res, next) => {
    requestContext(req).generation = generation.name;
    next();
  };
  // A body over 1 MiB is read only for a caller with credentials (401 first otherwise): the public
  // and sign-in routes below take small bodies.
  const identifyLarge = identifyBeforeBody(parts.auth, { resolveUser: parts.resolveUser, signInPaths: generation.sessionPaths.map((p) => cookiePath(p.path)) });
  router.use(series(setGeneration, refuseForeignBody(parts.rawBodyPaths), jsonBody({ generation, limit: parts.maxBodySize, exempt: parts.rawBodyPaths, largeBodies, identifyLarge })));
  for (const install of parts.publicRoutes) install(router, { generation: generation.name });
  mountSessionRoutes(router, generation.sessionPaths.map((p) => p.path), parts.session);
  router.use(series(requireToken(parts.auth, parts.resolveUser), privateAnswers, requestOptions(parts.request, generation.name), provideIdempotency(parts.idempotency)));
  const metadata = toHandler(async (req, res) => res.json(await parts.metadata(requestContext(req))));
  for (const { path } of generation.metadataPaths) router.get(path, metadata);
  for (const install of parts.routes) install(router, { generation: generation.name });
  mountBulkRoutes(router, { lookup: parts.repository, jobs: parts.jobs, generation, maxUpsertItems: parts.maxUpsertItems });
  mountEventRoutes(router, parts.events);
  mountAttributeRoutes(router, parts.repository, parts.attributes);
  // Before the link routes, which would take `redeliver` for a link.
  mountWebhookRoutes(router, parts.webhooks);
  mountLinkRoutes(router, parts.repository);
  mountJobRoutes(router, { lookup: parts.repository, maxListSize: parts.maxListSize ?? 1000 });
  mountRecordRoutes(router, parts.repository, generation);
  router.use((req, _res, next) => {
    next(new ApiError('CORE_ROUTE_NOT_FOUND', `No route ${req.method} ${req.baseUrl}${req.path}`));
  });
  return dispatchByFirstSegment(router);
}

/**
 * A query string is read whole or refused (400): Express's own parser keeps the first 1,000
 * parameters and drops the others without a word, and reads escapes that are not UTF-8 as the
 * literal text. It is read before any route, so that every route, plugins' and public ones
 * included, refuses such a query string (or one nested too deep) before it does anything, whether
 * it reads a parameter or not. `req.query` is that parse, which the routes read too (`queryOf`:
 * bracket form, the same limits, parsed once per request).
 */
const wholeQuery: RequestHandler = (req, _res, next) => {
  const query = queryOf(req);
  Object.defineProperty(req, 'query', { configurable: true, enumerable: true, get: () => query });
  next();
};

/**
 * The whole API as one Express router: `/api/…`, `/api/v1/…`, `/apidocs/` (Swagger UI) and
 * `/apidocs/openapi.json`. Requests wait until the instance is ready.
 */
export function createRouter(parts: RouterParts): Router {
  const root = express.Router();
  guardMount(root);
  const whenReady = toHandler(async (_req, _res, next) => {
    await parts.ready();
    next();
  });
  root.use(series(requestIdHeader, parts.traffic.track, wholeQuery, whenReady));
  if (parts.apidocs !== false) mountApiDocs(root, parts.openapi);
  for (const install of parts.rootRoutes ?? []) install(root);
  mountPublicEventRoutes(root, parts.events);
  const served = parts.generations ?? ['A', 'B'];
  // One limit for both generations.
  const largeBodies = new ConcurrencyLimit({ ...parts.largeBodies, busy: () => new ApiError('CORE_BUSY', 'Too many large bodies at once; try again shortly') });
  // The longer base first: generation A's router would take `v1` for an entity name.
  for (const generation of [GENERATIONS.B, GENERATIONS.A]) {
    if (served.includes(generation.name)) root.use(generation.base, generationRouter(generation, { parts, largeBodies }));
  }
  root.use(errorHandler(parts.logger, parts.translateError));
  return root;
}

/**
 * Swagger UI at `/apidocs/` and the document at `/apidocs/openapi.json`, its server the mount path.
 * Only `GET` and `HEAD` read them: Swagger UI's page answers any method and path below it, so other
 * methods (`POST /apidocs/openapi.json`, `DELETE`, `TRACE`) pass on to the host's answer for a path
 * nobody serves instead of getting the page with 200.
 */
function mountApiDocs(root: Router, openapi: RouterParts['openapi']): void {
  root.get('/apidocs/openapi.json', (req, res) => {
    res.type('application/json').send(openapi(req.baseUrl));
  });
  const ui = series(
    ...swaggerUi.serveFiles(undefined, { swaggerOptions: { url: './openapi.json' } }),
    swaggerUi.setup(undefined, { swaggerOptions: { url: './openapi.json' } }),
  );
  root.use('/apidocs', (req, res, next) => (req.method === 'GET' || req.method === 'HEAD' ? ui(req, res, next) : next()));
}
