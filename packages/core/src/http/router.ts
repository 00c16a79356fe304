import express, { type Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { AuthService } from '../auth/auth-service';
import type { RequestContext } from '../context';
import { ApiError } from '../errors';
import { GENERATIONS, type Generation } from '../generations';
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
  /** Paths (below the base) whose bodies another parser reads (multipart). */
  rawBodyPaths?: (path: string) => boolean;
  logger?: Logger;
  /** Database errors met outside repositories (sign-in, plugins) → API errors. */
  translateError?: (error: unknown) => ApiError | undefined;
}

/** One generation's routes; mounted at `/api` (A) and `/api/v1` (B) from the same code. */
function generationRouter(generation: Generation, parts: RouterParts): Router {
  const router = express.Router();
  router.use((req, _res, next) => {
    requestContext(req).generation = generation.name;
    next();
  });
  router.use(jsonBody({ generation, limit: parts.maxBodySize, exempt: parts.rawBodyPaths }));
  for (const install of parts.publicRoutes) install(router, { generation: generation.name });
  mountSessionRoutes(router, generation.sessionPaths.map((p) => p.path), parts.session);
  router.use(requireToken(parts.auth));
  router.use(requestOptions(parts.request, generation.name));
  const metadata = toHandler(async (req, res) => res.json(await parts.metadata(requestContext(req))));
  for (const { path } of generation.metadataPaths) router.get(path, metadata);
  for (const install of parts.routes) install(router, { generation: generation.name });
  mountBulkRoutes(router, { lookup: parts.repository, jobs: parts.jobs, generation });
  mountAttributeRoutes(router, parts.repository, parts.attributes);
  mountRecordRoutes(router, parts.repository, generation);
  router.use((req, _res, next) => {
    next(new ApiError('CORE_ROUTE_NOT_FOUND', `No route ${req.method} ${req.baseUrl}${req.path}`));
  });
  return router;
}

/**
 * The whole API as one Express router: `/api/…`, `/api/v1/…`, `/apidocs/` (Swagger UI) and
 * `/apidocs/openapi.json`. Requests wait until the instance is ready.
 */
export function createRouter(parts: RouterParts): Router {
  const root = express.Router();
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
  // The longer base first: `/api` would also match `/api/v1/…`.
  for (const generation of [GENERATIONS.B, GENERATIONS.A]) root.use(generation.base, generationRouter(generation, parts));
  root.use(errorHandler(parts.logger, parts.translateError));
  return root;
}
