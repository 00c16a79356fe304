import { CORE_ERRORS } from './errors';
import type { Router } from 'express';
import type { AccessService } from './auth/access-service';
import type { AuthService } from './auth/auth-service';
import type { LoginThrottle } from './auth/login-throttle';
import { AttributeEndpoints } from './attributes/endpoints';
import type { AttributeService } from './attributes/service';
import type { InstanceBase } from './app-services';
import type { ContextUser, RequestContext } from './context';
import { buildMetadata } from './definition/metadata';
import type { Logger } from './logger';
import { createRouter } from './http/router';
import type { Traffic } from './http/traffic';
import type { InstanceEvents } from './events/events';
import type { InstanceWebhooks } from './events/webhooks';
import type { JobService } from './jobs/job-service';
import type { IdempotencyKeys } from './idempotency/idempotency-keys';
import { buildOpenApi } from './openapi/build-document';
import type { OpenApiFragment } from './plugin';
import { deadlockLost, translateOutage } from './sql/dialects/shared';
import { mayReadField } from './records/guard';

/** The services the router of an instance serves. */
interface RouterServices {
  ready: () => Promise<void>;
  auth: AuthService;
  throttle: LoginThrottle;
  accessService: AccessService;
  attributes: AttributeService;
  jobs: JobService;
  /** The OpenAPI document as text, for the path the router is mounted at. */
  openapi: (mountPath?: string) => string;
  logger: Logger;
  traffic: Traffic;
  events: InstanceEvents;
  webhooks: InstanceWebhooks;
  idempotency: IdempotencyKeys;
}

/**
 * The OpenAPI document with the host's routes, built once and kept as text: every caller gets
 * its own copy, so nothing can change what is served.
 */
export function openApiText({ options, registry, schema }: InstanceBase, hostRoutes: OpenApiFragment): (mountPath?: string) => string {
  let document: Record<string, unknown> | undefined;
  const texts = new Map<string, string>();
  return (mountPath = '') => {
    document ??= buildOpenApi({
      schema,
      fragments: registry.fragments,
      hostRoutes,
      info: options.openapi,
      publicUrl: options.publicUrl,
      generations: options.generations,
      defaultListSize: options.defaultListSize,
      maxListSize: options.maxListSize,
      parameters: registry.parameters,
      metaCategories: registry.presenter.metaCategories(),
      addedKeys: (entity) => registry.presenter.addedKeys(entity),
      languages: registry.languages,
      errorCodes: [...Object.keys(CORE_ERRORS), ...registry.errorCodes],
    });
    let text = texts.get(mountPath);
    if (text === undefined) {
      // The paths are those of the router; where the host mounts it is the server's part.
      const url = `${(options.publicUrl ?? '').replace(/\/+$/, '')}${mountPath}` || '/';
      text = JSON.stringify({ ...document, servers: [{ url }] });
      // Mount paths come from the host's code: a handful, never one per request.
      if (texts.size < 100) texts.set(mountPath, text);
    }
    return text;
  };
}

/** The metadata of the instance as the caller sees it: entity types and fields it may read. */
function metadataFor({ registry, schema }: InstanceBase, accessService: AccessService) {
  return async (ctx: RequestContext) => {
    const access = (ctx.access ??= await accessService.forUser(ctx.user));
    const metadata = buildMetadata(schema, {
      languages: registry.languages.codes,
      visible: (m) => access.scope(m.name).read !== 'no',
      visibleField: (m, f) => mayReadField(access, { schema, model: m, field: f }),
    });
    return { ...metadata, app: { ...metadata.app, ...registry.appMetadata } };
  };
}

/** The router of an instance: both generations of the API, plugin routes, and `/apidocs`. */
export function buildRouter(base: InstanceBase, services: RouterServices): Router {
  const { options, registry, schema, repositories } = base;
  const { auth, throttle, accessService } = services;
  const acl = async (user: ContextUser) => (await accessService.forUser(user)).acl(schema.entities.keys());
  return createRouter({
    ready: services.ready,
    auth,
    session: { auth, acl, throttle, secureCookies: (options.publicUrl ?? '').startsWith('https:') },
    repository: (name) => repositories.get(name),
    metadata: metadataFor(base, accessService),
    openapi: services.openapi,
    routes: registry.routes,
    publicRoutes: registry.publicRoutes,
    attributes: new AttributeEndpoints(services.attributes),
    request: { languages: registry.languages, hooks: registry.requestHooks },
    rootRoutes: registry.rootRoutes,
    rawBodyPaths: (path) => registry.isRawBodyPath(path),
    maxBodySize: options.maxBodySize ?? '32mb',
    maxListSize: options.maxListSize,
    maxUpsertItems: options.maxUpsertItems ?? 10_000,
    largeBodies: { concurrency: options.maxConcurrentLargeBodies ?? 4, queue: options.largeBodyQueue ?? 64 },
    traffic: services.traffic,
    jobs: services.jobs,
    events: {
      lookup: (name) => repositories.get(name),
      subscriptions: services.events.subscriptions,
      auth,
      resolveUser: options.auth?.resolveUser,
      accessFor: (user) => accessService.forUser(user),
      publicData: () => services.events.publicData(),
    },
    webhooks: { redeliver: (ctx, id) => services.webhooks.redeliver(ctx, id) },
    idempotency: services.idempotency,
    generations: options.generations,
    apidocs: options.apidocs,
    resolveUser: options.auth?.resolveUser,
    logger: services.logger,
    // Outside repositories (sign-in, plugins) only conditions of the database itself are known: 503.
    translateError: (error) => {
      const { dialect } = base.database;
      const known = dialect.translateError(error, {});
      if (known?.status === 503) return known;
      // A deadlock that outlasted the write's own tries: 503 with Retry-After, never a 500.
      return dialect.isDeadlock(error) ? deadlockLost(error) : translateOutage(error);
    },
  });
}
