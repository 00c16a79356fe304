import { randomBytes } from 'node:crypto';
import type { Router } from 'express';
import { AuthService, type AuthOptions } from './auth/auth-service';
import { hashPassword } from './auth/password';
import { assertRoleShape } from './auth/role-validation';
import { AccessService } from './auth/access-service';
import type { RoleData } from './auth/access-control';
import { CORE_ENTITIES } from './core-entities';
import { systemContext, type ContextUser } from './context';
import type { ApiRecord, EntityDefinition } from './declarations';
import { buildMetadata } from './definition/metadata';
import { normalizeDefinitions, type EntityModel, type SchemaModel } from './definition/normalize';
import { ApiError, BootError } from './errors';
import { consoleLogger, type Logger } from './http/error-handler';
import { createRouter } from './http/router';
import { Languages } from './languages';
import { buildOpenApi } from './openapi/build-document';
import { hostRoutesFragment } from './openapi/host-routes';
import { registerPlugins, type PluginEntry } from './plugin';
import { Registry } from './registry';
import { AuthStore } from './sql/auth-store';
import { openDatabase, type Database } from './sql/database';
import { JobService } from './jobs/job-service';
import { InProcessQueue } from './jobs/queue';
import { PgBossQueue } from './jobs/pg-boss-queue';
import { massUpdateJob, upsertJob } from './jobs/bulk-jobs';
import { JobStore } from './sql/job-store';
import { ThrottleStore } from './sql/throttle-store';
import { LoginThrottle } from './auth/login-throttle';
import { translateOutage } from './sql/dialects/shared';
import { Repository } from './sql/repository';
import { openCacheEvents, type CacheEvent } from './sql/cache-events';
import { AttributeStore } from './sql/attribute-store';
import { valueTable } from './sql/attribute-table';
import { AttributeService, type V1AttributesFormat } from './attributes/service';
import { AttributeEndpoints } from './attributes/endpoints';
import { installAttributeRules } from './attributes/attribute-rules';
import { planSchema, syncSchema, type SchemaStep } from './sql/schema-sync';

export interface EntityApiOptions {
  /** `sqlite::memory:`, `sqlite:<path>` or `postgres://…`. */
  database: string;
  /** The host's entity definitions. */
  entities: readonly EntityDefinition[];
  plugins?: readonly PluginEntry[];
  auth?: AuthOptions;
  /** Created on start when no user of that name exists. */
  admin?: { userName: string; password: string };
  /** Default page size of lists; default 200. */
  defaultListSize?: number;
  /** Largest `maxSize`; default 1000. */
  maxListSize?: number;
  /** Largest JSON body; default `32mb`. */
  maxBodySize?: string | number;
  /** The address clients reach the instance at (links in responses). */
  publicUrl?: string;
  /**
   * Languages of the instance, main first (`['en_US', 'de_DE']`): shown in metadata, accepted in
   * the `language` header, and the languages of multilingual fields (`@entity-records/multilang`).
   */
  languages?: string[];
  /**
   * Generation B without `Flatten-Attributes: true`: no attributes (`'none'`, default) or the
   * earlier variant's `attributesValues` array on every record (`'nested'`).
   */
  v1AttributesFormat?: V1AttributesFormat;
  openapi?: {
    title?: string;
    version?: string;
    description?: string;
    /** Files (globs) of the host's own routes whose `@openapi` JSDoc blocks join the document. */
    apis?: string[];
  };
  logger?: Logger;
  /** PostgreSQL pool size; default 10. */
  poolSize?: number;
  jobs?: {
    /** `pg-boss` (default on PostgreSQL: processes share the work) or `in-process` (default on SQLite). */
    queue?: 'pg-boss' | 'in-process';
    /** pg-boss: seconds after which a job whose process died runs again; default 900. */
    expireInSeconds?: number;
    /** Whether this process runs jobs (false for API-only processes); default true. */
    worker?: boolean;
  };
}

/** A running instance: the router to mount, repositories for server-side code, and its life cycle. */
export interface EntityApi {
  /** Mount with `app.use(api.router)`: serves `/api`, `/api/v1` and `/apidocs`. */
  readonly router: Router;
  readonly schema: SchemaModel;
  readonly database: Database;
  readonly auth: AuthService;
  /** Sign-in throttling (shared by processes through the database); plugins throttle their own secrets with it. */
  readonly throttle: LoginThrottle;
  readonly options: Readonly<EntityApiOptions>;
  /** The instance's languages, main first (option `languages`). */
  readonly languages: Languages;
  /** Syncs the schema and creates the admin; requests wait for it. Idempotent. */
  ready(): Promise<void>;
  /** The repository of an entity type; an unknown name throws `CORE_CONFIG_INVALID`. */
  repository<TRecord extends ApiRecord = ApiRecord>(entity: string): Repository<TRecord>;
  /** The OpenAPI 3.1 document. */
  openapi(): Record<string, unknown>;
  /** What schema sync would do now, without doing it. */
  schemaDiff(): Promise<SchemaStep[]>;
  close(): Promise<void>;
}

/** Jobs are made by the system; a client may only cancel its own pending job. */
function installJobHooks(registry: Registry): void {
  registry.onRecord('beforeCreate', 'Job', ({ ctx }) => {
    if (ctx.user) throw new ApiError('CORE_FORBIDDEN', 'Jobs are started by upsertAsync and entityMassUpdate');
  });
  registry.onRecord('beforeUpdate', 'Job', (event) => {
    const { data, existing } = event;
    const changed = (k: string) => JSON.stringify((data as Record<string, unknown>)[k] ?? null) !== JSON.stringify((existing as Record<string, unknown>)[k] ?? null);
    const keys = Object.keys(data ?? {}).filter(changed);
    if (keys.some((k) => k !== 'status') || (keys.includes('status') && data?.status !== 'Canceled')) {
      throw new ApiError('CORE_VALIDATION_FAILED', 'Only status Canceled can be set on a job', {
        details: { issues: [{ path: ['status'], code: 'invalid_enum_value', message: 'status may only become Canceled' }] },
      });
    }
    if (keys.includes('status') && existing?.status !== 'Pending') {
      throw new ApiError('CORE_CONFLICT', `Only a pending job can be canceled; this one is ${String(existing?.status)}`);
    }
    // A worker may take the job between this check and the write: the write checks again.
    if (keys.includes('status')) event.expect = { ...event.expect, status: 'Pending' };
  });
}

/** Password writes on User are hashed; a changed password revokes the user's tokens. */
function installUserHooks(registry: Registry, auth: () => AuthService, passwordCost?: number): void {
  const hashInBody = async ({ data }: { data?: Record<string, unknown> }) => {
    if (!data || data.password === undefined || data.password === null) return;
    if (typeof data.password !== 'string' || data.password.length === 0 || data.password.length > 1000) {
      throw new ApiError('CORE_VALIDATION_FAILED', 'password must be a non-empty string', {
        details: { issues: [{ path: ['password'], code: 'invalid_type', message: 'password must be a non-empty string' }] },
      });
    }
    data.password = await hashPassword(data.password, passwordCost);
  };
  registry.onRecord('beforeCreate', 'User', hashInBody);
  registry.onRecord('beforeUpdate', 'User', hashInBody);
  registry.onRecord('afterUpdate', 'User', async ({ id, existing, record }) => {
    await auth().forgetUser(id as string);
    if (existing && record && existing.isActive !== record.isActive) await auth().revokeUser(id as string);
  });
  registry.onRecord('beforeUpdate', 'User', async ({ id, data }) => {
    if (data?.password !== undefined) await auth().revokeUser(id as string);
  });
  registry.onRecord('afterDelete', 'User', ({ id }) => auth().revokeUser(id as string));
}

/** Attribute values: one value table per entity type with attributes, the rules of Attribute writes. */
function createAttributes(registry: Registry, options: EntityApiOptions, database: Database, schema: SchemaModel): AttributeService {
  const format = options.v1AttributesFormat ?? 'none';
  if (format !== 'none' && format !== 'nested') throw new BootError('CORE_CONFIG_INVALID', `v1AttributesFormat must be 'none' or 'nested', not '${String(format)}'`);
  const languages = registry.languages.codes;
  for (const model of schema.entities.values()) if (model.def.hasAttributes) registry.addTable(valueTable(model, database.dialect));
  installAttributeRules(registry.hooks, schema, languages);
  const store = new AttributeStore(database, schema, languages);
  return new AttributeService({ database, schema, store, languages, v1AttributesFormat: format });
}

/**
 * Builds an instance from definitions and plugins.
 *
 * @example
 * const api = createEntityApi({ database: 'sqlite:data/app.db', entities: [Brand, Product] })
 * app.use(api.router)
 * await api.ready()
 * @see docs/guide/getting-started.md
 */
export function createEntityApi(options: EntityApiOptions): EntityApi {
  const languages = new Languages(options.languages);
  const repositories = new Map<string, Repository>();
  const registry = new Registry(languages, (name) => repositories.get(name));
  for (const def of CORE_ENTITIES) registry.addEntity(def);
  for (const def of options.entities) registry.addEntity(def);
  // Core's own hooks first: plugins never see a password before it is hashed.
  // The hooks run at request time, when `auth` (made below, once the schema is known) exists.
  installUserHooks(registry, () => auth, options.auth?.passwordCost);
  registerPlugins(options.plugins ?? [], registry);
  const schema = normalizeDefinitions(registry.definitions(), { attributes: registry.attributes });
  for (const model of schema.entities.values()) for (const fn of registry.entityCallbacks) fn(model);

  // Read at start-up: a broken JSDoc block is a boot error, not a 500 on /apidocs.
  const hostRoutes = hostRoutesFragment(options.openapi?.apis ?? []);
  const database = openDatabase({ url: options.database, poolSize: options.poolSize });
  const attributes = createAttributes(registry, options, database, schema);
  const accessService = new AccessService(async (ids) => {
    const found = await (repositories.get('Role') as Repository).find(systemContext(), {
      where: [{ type: 'in', attribute: 'id', value: [...ids] }],
      collectionOnly: true,
      maxSize: 1000,
    });
    return (found.list ?? []).map((r) => ({ id: r.id, scopes: (r.scopes ?? {}) as RoleData['scopes'], fields: (r.fields ?? {}) as RoleData['fields'] }));
  }, (options.auth?.tokenCacheSeconds ?? 5) * 1000);
  const env = {
    database,
    schema,
    hooks: registry.hooks,
    maxListSize: options.maxListSize ?? 1000,
    defaultListSize: options.defaultListSize ?? 200,
    accessFor: (user: ContextUser | undefined) => accessService.forUser(user),
    repository: (name: string) => repositories.get(name) as Repository,
    attributes,
    presenter: registry.presenter,
  };
  for (const m of schema.entities.values()) repositories.set(m.name, new Repository(env, m));
  const cacheEvents = openCacheEvents(database);
  const announce = (event: CacheEvent) => cacheEvents.publish(event).catch(() => undefined);
  const auth = new AuthService(new AuthStore(database, schema.entity('User') as EntityModel, schema.entity('Role') as EntityModel), options.auth, announce);
  const throttle = new LoginThrottle(new ThrottleStore(database), options.auth?.throttle);
  const jobStore = new JobStore(database, schema.entity('Job') as EntityModel);
  const usePgBoss = (options.jobs?.queue ?? (database.dialect.name === 'postgres' ? 'pg-boss' : 'in-process')) === 'pg-boss';
  const queue = usePgBoss
    ? new PgBossQueue({ connectionString: options.database, expireInSeconds: options.jobs?.expireInSeconds })
    : new InProcessQueue(() => jobStore.unfinished());
  const authStore = new AuthStore(database, schema.entity('User') as EntityModel, schema.entity('Role') as EntityModel);
  const jobs = new JobService(jobStore, queue, (id) => authStore.userById(id), (jobId, error) =>
    (options.logger ?? consoleLogger).error(`job ${jobId} failed`, { error: error instanceof Error ? error.stack : String(error) }),
  );
  const lookup = (name: string) => repositories.get(name);
  jobs.register('upsert', upsertJob(lookup));
  jobs.register('massUpdate', massUpdateJob(lookup));
  installJobHooks(registry);
  const checkRole = ({ data }: { data?: Record<string, unknown> }) => assertRoleShape(data ?? {});
  registry.onRecord('beforeCreate', 'Role', checkRole);
  registry.onRecord('beforeUpdate', 'Role', checkRole);
  for (const hook of ['afterUpdate', 'afterDelete'] as const) {
    registry.onRecord(hook, 'Role', async ({ id }) => {
      accessService.forgetRole(id as string);
      await announce({ kind: 'role', id: id as string });
    });
  }
  const logger = options.logger ?? consoleLogger;

  // Built once, kept as text: every caller gets its own copy, so nothing can change what is served.
  let openapiText: string | undefined;
  const openapiJson = () =>
    (openapiText ??= JSON.stringify(
      buildOpenApi({
        schema,
        fragments: registry.fragments,
        hostRoutes,
        info: options.openapi,
        publicUrl: options.publicUrl,
        defaultListSize: options.defaultListSize,
        maxListSize: options.maxListSize,
        parameters: registry.parameters,
        metaCategories: registry.presenter.metaCategories(),
        languages,
      }),
    ));
  const openapi = () => JSON.parse(openapiJson()) as Record<string, unknown>;

  let readyPromise: Promise<void> | undefined;
  // A failed start (database down) is tried again by the next request.
  const ready = () =>
    (readyPromise ??= (async () => {
      await syncSchema(database, schema, registry.tables);
      await cacheEvents.start({
        onEvent: (event) => (event.kind === 'role' ? accessService.forgetRole(event.id) : auth.forget(event)),
        onReset: () => {
          auth.forgetAll();
          accessService.forgetAll();
        },
      });
      if (options.admin) await ensureAdmin({ repository: () => repositories.get('User') as never }, options.admin);
      for (const fn of registry.readyCallbacks) await fn();
      await jobs.start(options.jobs?.worker !== false);
    })().catch((error) => {
      readyPromise = undefined;
      throw error;
    }));

  const acl = async (user: ContextUser) => (await accessService.forUser(user)).acl(schema.entities.keys());

  const router = createRouter({
    ready,
    auth,
    session: { auth, acl, throttle, secureCookies: (options.publicUrl ?? '').startsWith('https:') },
    repository: (name) => repositories.get(name),
    metadata: async (ctx) => {
      const access = (ctx.access ??= await accessService.forUser(ctx.user));
      const metadata = buildMetadata(schema, {
        languages: languages.codes,
        visible: (m) => access.scope(m.name).read !== 'no',
        visibleField: (m, f) => f.system || access.field(m.name, f.name).read,
      });
      return { ...metadata, app: { ...metadata.app, ...registry.appMetadata } };
    },
    openapi: openapiJson,
    routes: registry.routes,
    publicRoutes: registry.publicRoutes,
    attributes: new AttributeEndpoints(attributes),
    request: { languages, hooks: registry.requestHooks },
    rootRoutes: registry.rootRoutes,
    rawBodyPaths: (path) => registry.isRawBodyPath(path),
    maxBodySize: options.maxBodySize ?? '32mb',
    jobs,
    logger,
    translateError: translateOutage,
  });

  const instance: EntityApi = {
    router,
    schema,
    database,
    auth,
    throttle,
    options,
    languages,
    ready,
    openapi,
    repository<TRecord extends ApiRecord = ApiRecord>(entity: string) {
      const repository = repositories.get(entity);
      if (!repository) throw new BootError('CORE_CONFIG_INVALID', `unknown entity type '${entity}'`);
      return repository as unknown as Repository<TRecord>;
    },
    schemaDiff: () => planSchema(database.knex, database.dialect, schema, registry.tables),
    async close() {
      for (const fn of [...registry.closeCallbacks].reverse()) await fn();
      if (readyPromise) await readyPromise.catch(() => undefined);
      await jobs.stop();
      await cacheEvents.close();
      await database.close();
    },
  };
  registry.built = instance;
  return instance;
}

/**
 * Creates an admin user when no user of that name exists; never changes an existing one. Without
 * a password, one is generated and returned (print it once; it is not stored in clear anywhere).
 */
export async function ensureAdmin(
  api: Pick<EntityApi, 'repository'>,
  admin: { userName: string; password?: string },
): Promise<{ created: boolean; password?: string }> {
  const users = api.repository('User');
  const ctx = systemContext();
  const found = await users.find(ctx, {
    where: [{ type: 'equals', attribute: 'userName', value: admin.userName }],
    maxSize: 1,
    collectionOnly: true,
  });
  if (found.list?.length) return { created: false };
  const password = admin.password ?? randomBytes(18).toString('base64url');
  try {
    await users.create(ctx, { userName: admin.userName, name: 'Administrator', password, isAdmin: true, isActive: true });
  } catch (error) {
    // Another process starting at the same moment created it first.
    if (error instanceof ApiError && error.code === 'CORE_UNIQUE_VIOLATION') return { created: false };
    throw error;
  }
  return { created: true, ...(admin.password === undefined && { password }) };
}
