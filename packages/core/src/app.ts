import { AuthService } from './auth/auth-service';
import { LoginThrottle } from './auth/login-throttle';
import { setPasswordHashQueue } from './auth/password';
import { instanceLifecycle } from './app-lifecycle';
import { buildRouter, openApiText } from './app-router';
import { addRepositories, createAccessService, createAttributes, createIdempotency, createJobs, tokenCacheSeconds, type InstanceBase } from './app-services';
import type { EntityApi, EntityApiOptions, EntityJobs, TypedEntityApi } from './app-types';
import { CORE_ENTITIES } from './core-entities';
import { installJobHooks, installRoleHooks, installUserHooks } from './core-hooks';
import { installDefinitionHooks } from './definition-hooks';
import type { ApiRecord, EntityDefinition } from './declarations';
import { normalizeDefinitions, type EntityModel } from './definition/normalize';
import { BootError } from './errors';
import { Languages } from './languages';
import { Traffic } from './http/traffic';
import { hostRoutesFragment } from './openapi/host-routes';
import { authenticateMiddleware } from './http/authenticate';
import { instanceLogger, type InstanceLogger } from './logger';
import { checkOptions } from './options-check';
import { registerPlugins, type CheckedPlugins, type PluginEntry } from './plugin';
import { Registry } from './registry';
import { AuthStore } from './sql/auth-store';
import { createEvents } from './events/events';
import { createWebhooks } from './events/webhooks';
import { openCacheEvents, type CacheEvent } from './sql/cache-events';
import { openDatabase, type Database } from './sql/database';
import { onStatement } from './sql/query-log';
import { translateOutage } from './sql/dialects/shared';
import type { Repository } from './records/repository';
import { planSchema } from './sql/schema-sync';
import { sqlContext } from './sql/sql-context';
import { ThrottleStore } from './sql/throttle-store';

export type { EntityApi, EntityApiOptions } from './app-types';
export { ensureAdmin } from './ensure-admin';

/**
 * Builds an instance from definitions and plugins.
 *
 * @example
 * const api = createEntityApi({ database: 'sqlite:data/app.db', entities: [Brand, Product] })
 * app.use(api.router)
 * await api.ready()
 * @see docs/guide/getting-started.md
 */
export function createEntityApi<const TEntities extends readonly EntityDefinition[], const TPlugins extends readonly PluginEntry[] = []>(
  options: EntityApiOptions<TEntities> & { plugins?: CheckedPlugins<TPlugins> },
): TypedEntityApi<TEntities> {
  checkOptions(options);
  const logger = instanceLogger(options.logger);
  const languages = new Languages(options.languages);
  if (options.auth?.passwordHashQueue !== undefined) setPasswordHashQueue(options.auth.passwordHashQueue);
  const repositories = new Map<string, Repository>();
  const registry = new Registry(languages, (name) => repositories.get(name));
  for (const def of CORE_ENTITIES) registry.addEntityFrom(def, 'core');
  for (const def of options.entities) registry.addEntity(def);
  // Core's own hooks first: plugins never see a password before it is hashed.
  // The hooks run at request time, when `auth` (made below, once the schema is known) exists.
  installUserHooks(registry, () => auth, options.auth?.passwordCost);
  registerPlugins(options.plugins ?? [], (name) => registry.forPlugin(name, logger.child({ plugin: name })));
  const schema = normalizeDefinitions(registry.definitions(), { attributes: registry.attributes });
  for (const model of schema.entities.values()) for (const fn of registry.entityCallbacks) fn(model);
  // A definition's own hooks and row rule run after the plugins' hooks of the same entity type.
  installDefinitionHooks(registry.hooks, [...schema.entities.values()].map((model) => model.def));

  // Read at start-up: a broken JSDoc block is a boot error, not a 500 on /apidocs.
  const hostRoutes = hostRoutesFragment(options.openapi?.apis ?? []);
  const database = openDatabase({ url: options.database, poolSize: options.poolSize, statementTimeoutMs: options.statementTimeoutMs, poolTimeoutMs: options.poolTimeoutMs });
  logSql(database, logger);
  const base: InstanceBase = { options, registry, schema, database, repositories, logger };
  const attributes = createAttributes(base);
  const accessService = createAccessService(base);
  addRepositories(base, { accessService, attributes });
  const cacheEvents = openCacheEvents(database);
  const announce = (event: CacheEvent) => cacheEvents.publish(event).catch(() => undefined);
  const authStore = new AuthStore(database, schema.entity('User') as EntityModel, schema.entity('Role') as EntityModel);
  const auth = new AuthService(authStore, { ...options.auth, tokenCacheSeconds: tokenCacheSeconds(base) }, announce);
  const throttle = new LoginThrottle(new ThrottleStore(database), options.auth?.throttle, options.auth?.passwordHashQueue);
  const jobs = createJobs(base);
  installJobHooks(registry, jobs);
  installRoleHooks(registry, { accessService, schema }, announce);

  const openapi = openApiText(base, hostRoutes);
  const traffic = new Traffic();
  const webhooks = createWebhooks(base, { announce });
  const events = createEvents(base, { purgeDeliveries: webhooks.purge });
  events.feed.onCommitted(() => webhooks.changesCommitted());
  const idempotency = createIdempotency(base);
  const { ready, close } = instanceLifecycle(base, { cacheEvents, accessService, auth, jobs, traffic, events, webhooks, idempotency });
  const router = buildRouter(base, { ready, auth, throttle, accessService, attributes, jobs, openapi, logger, traffic, events, webhooks, idempotency });
  const hostJobs: EntityJobs = {
    define: (type, handler) => jobs.define(type, handler),
    start: (type, payload, ctx) => jobs.enqueue(type, payload, ctx),
  };
  const instance: EntityApi = {
    router,
    schema,
    database,
    auth,
    throttle,
    options,
    languages,
    ready,
    openapi: () => JSON.parse(openapi()) as Record<string, unknown>,
    repository: (<TRecord extends ApiRecord = ApiRecord>(entity: string) => {
      const repository = repositories.get(entity);
      if (!repository) throw new BootError('CORE_CONFIG_INVALID', `unknown entity type '${entity}'`);
      return repository as unknown as Repository<TRecord>;
    }),
    authenticate: ({ optional } = {}) =>
      authenticateMiddleware({ ready, auth, resolveUser: options.auth?.resolveUser, logger: logger, translateError: translateOutage, optional }),
    jobs: hostJobs,
    schemaDiff: () => planSchema(sqlContext({ database, schema }, database.knex), registry.tables),
    close,
  };
  registry.built = instance;
  // One function serves both: the typed overload only narrows what the caller sees.
  return instance as TypedEntityApi<TEntities>;
}

/** SQL text (never its values: they hold passwords and personal data) at level debug, when it is on. */
function logSql(database: Database, logger: InstanceLogger): void {
  if (!logger.debugEnabled) return;
  onStatement(database, (sql) => logger.debug({ sql }, 'sql'));
}
