import express, { type RequestHandler, type Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { AuthService } from '../auth/auth-service';
import type { RequestContext } from '../context';
import { ApiError } from '../errors';
import type { RootRouteInstaller, RouteInstaller } from '../plugin';
import { mountSessionRoutes, requireToken, type SessionParts } from './auth-routes';
import { jsonBody } from './body';
import { errorHandler, type Logger } from './error-handler';
import { mountRecordRoutes, type RepositoryLookup } from './record-routes';
import { mountBulkRoutes } from './bulk-routes';
import type { JobService } from '../jobs/job-service';
import { requestContext } from './request-context';
import { requestOptions, type RequestOptionsParts } from './request-options';
import { mountAttributeRoutes } from './attribute-routes';
import type { AttributeEndpoints } from '../attributes/endpoints';
import { toHandler } from './to-handler';
import { assertQueryParameterCount, parseQueryString } from './list-params';
import type { Traffic } from './traffic';
import { ConcurrencyLimit } from '../util/concurrency-limit';

export interface RouterParts {
  ready: () => Promise<void>;
  auth: AuthService;
  session: SessionParts;
  repository: RepositoryLookup;
  metadata: (ctx: RequestContext) => Promise<unknown>;
  /** The OpenAPI document as JSON text. */
  openapi: () => string;
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
  /** Items a synchronous upsert takes at most (more: 413). */
  maxUpsertItems: number;
  /** Requests in flight, and the refusal of new ones once the instance closes. */
  traffic: Traffic;
  /** How many bodies over 1 MiB are read and handled at once, and how many more may wait. */
  largeBodies: { concurrency: number; queue: number };
  /** Paths (below the base) whose bodies another parser reads (multipart). */
  rawBodyPaths?: (path: string) => boolean;
  logger?: Logger;
  /** Database errors met outside repositories (sign-in, plugins) → API errors. */
  translateError?: (error: unknown) => ApiError | undefined;
}

/** One generation's routes; mounted at `/api` (A) and `/api/v1` (B) from the same code. */
function generationRouter(generation: 'A' | 'B', parts: RouterParts, largeBodies: ConcurrencyLimit): Router {
  const router = express.Router();
  router.use((req, _res, next) => {
    requestContext(req).generation = generation;
    next();
  });
  router.use(jsonBody({ generation, limit: parts.maxBodySize, exempt: parts.rawBodyPaths, largeBodies }));
  for (const install of parts.publicRoutes) install(router, { generation });
  const sessionPaths = generation === 'B' ? ['/userSession', '/App/user'] : ['/userSession'];
  mountSessionRoutes(router, sessionPaths, parts.session);
  router.use(requireToken(parts.auth));
  router.use(requestOptions(parts.request, generation));
  const metadata = toHandler(async (req, res) => res.json(await parts.metadata(requestContext(req))));
  router.get('/metadata', metadata);
  if (generation === 'B') router.get('/Metadata', metadata);
  for (const install of parts.routes) install(router, { generation });
  mountBulkRoutes(router, { lookup: parts.repository, jobs: parts.jobs, generation, maxUpsertItems: parts.maxUpsertItems });
  mountAttributeRoutes(router, parts.repository, parts.attributes);
  mountRecordRoutes(router, parts.repository, generation);
  router.use((req, _res, next) => {
    next(new ApiError('CORE_ROUTE_NOT_FOUND', `No route ${req.method} ${req.baseUrl}${req.path}`));
  });
  return router;
}

/**
 * A query string is read whole or refused (400): Express's own parser keeps the first 1,000
 * parameters and drops the others without a word. Every route, plugins' included, reads
 * `req.query` as the record routes do (bracket form, the same limits).
 */
const wholeQuery: RequestHandler = (req, _res, next) => {
  assertQueryParameterCount(req.originalUrl);
  let query: Record<string, unknown> | undefined;
  Object.defineProperty(req, 'query', { configurable: true, enumerable: true, get: () => (query ??= parseQueryString(req.originalUrl)) });
  next();
};

/**
 * The whole API as one Express router: `/api/…`, `/api/v1/…`, `/apidocs/` (Swagger UI) and
 * `/apidocs/openapi.json`. Requests wait until the instance is ready.
 */
export function createRouter(parts: RouterParts): Router {
  const root = express.Router();
  root.use(parts.traffic.track);
  root.use(wholeQuery);
  root.use(toHandler(async (_req, _res, next) => {
    await parts.ready();
    next();
  }));
  root.get('/apidocs/openapi.json', (_req, res) => {
    res.type('application/json').send(parts.openapi());
  });
  root.use(
    '/apidocs',
    swaggerUi.serveFiles(undefined, { swaggerOptions: { url: './openapi.json' } }),
    swaggerUi.setup(undefined, { swaggerOptions: { url: './openapi.json' } }),
  );
  for (const install of parts.rootRoutes ?? []) install(root);
  const largeBodies = new ConcurrencyLimit({ ...parts.largeBodies, busy: () => new ApiError('CORE_BUSY', 'Too many large bodies at once; try again shortly') });
  root.use('/api/v1', generationRouter('B', parts, largeBodies));
  root.use('/api', generationRouter('A', parts, largeBodies));
  root.use(errorHandler(parts.logger, parts.translateError));
  return root;
}
