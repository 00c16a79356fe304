import type { RoleData } from './auth/access-control';
import { AccessService } from './auth/access-service';
import { effectiveFieldRules } from './auth/role-fields';
import { installAttributeRules } from './attributes/attribute-rules';
import { AttributeService } from './attributes/service';
import type { EntityApiOptions } from './app-types';
import { systemContext, type ContextUser } from './context';
import type { EntityModel, SchemaModel } from './definition/normalize';
import { BootError } from './errors';
import type { InstanceLogger } from './logger';
import { massUpdateJob, upsertJob } from './jobs/bulk-jobs';
import { JobService } from './jobs/job-service';
import { PgBossQueue } from './jobs/pg-boss-queue';
import { InProcessQueue } from './jobs/queue';
import type { Registry } from './registry';
import { AttributeStore } from './sql/attribute-store';
import { valueTable } from './sql/attribute-table';
import { AuthStore } from './sql/auth-store';
import type { Database } from './sql/database';
import { JobStore } from './sql/job-store';
import { Repository } from './records/repository';
import { DEFAULT_KEEP_HOURS, DEFAULT_LEASE_SECONDS, IdempotencyKeys } from './idempotency/idempotency-keys';
import { IdempotencyStore } from './sql/idempotency-store';

/** What the services of an instance are built from. */
export interface InstanceBase {
  options: EntityApiOptions;
  registry: Registry;
  schema: SchemaModel;
  database: Database;
  /** The repository of each entity type, filled by `addRepositories`. */
  repositories: Map<string, Repository>;
  logger: InstanceLogger;
}

/** Attribute values: one value table per entity type with attributes, the rules of Attribute writes. */
export function createAttributes({ registry, options, database, schema }: InstanceBase): AttributeService {
  const format = options.v1AttributesFormat ?? 'none';
  if (format !== 'none' && format !== 'nested') throw new BootError('CORE_CONFIG_INVALID', `v1AttributesFormat must be 'none' or 'nested', not '${String(format)}'`);
  const languages = registry.languages.codes;
  for (const model of schema.entities.values()) if (model.def.hasAttributes) registry.addTable(valueTable(model, database.dialect));
  const store = new AttributeStore(database, schema, languages);
  installAttributeRules(registry.hooks, schema, { store, db: database.knex, languages });
  return new AttributeService({ database, schema, store, languages, v1AttributesFormat: format });
}

/**
 * Seconds a process trusts a checked token and the roles it loaded (`auth.tokenCacheSeconds`).
 * PostgreSQL tells every process of the database of a change at once (NOTIFY): there the cache
 * saves queries and 5 s bounds it only while that channel is down. SQLite has no such channel:
 * half a second keeps a token revoked through one process refused by every other within a
 * second, for a token query per process and token every half second.
 */
export function tokenCacheSeconds({ options, database }: Pick<InstanceBase, 'options' | 'database'>): number {
  return options.auth?.tokenCacheSeconds ?? (database.dialect.name === 'postgres' ? 5 : 0.5);
}

/** Users' rights, from the roles read (as the system) through the Role repository. */
export function createAccessService(base: InstanceBase): AccessService {
  const { repositories } = base;
  return new AccessService(async (ids) => {
    const found = await (repositories.get('Role') as Repository).find(systemContext(), {
      where: [{ type: 'in', attribute: 'id', value: [...ids] }],
      collectionOnly: true,
      maxSize: 1000,
    });
    return (found.list ?? []).map((r) => ({
      id: r.id,
      scopes: (r.scopes ?? {}) as RoleData['scopes'],
      fields: effectiveFieldRules((r.fields ?? {}) as RoleData['fields'], base.schema),
    }));
  }, tokenCacheSeconds(base) * 1000);
}

/** One repository per entity type, all sharing the instance's database, hooks, rights and list sizes. */
export function addRepositories(base: InstanceBase, services: { accessService: AccessService; attributes: AttributeService }): void {
  const { options, registry, database, schema, repositories } = base;
  const env = {
    database,
    schema,
    hooks: registry.hooks,
    maxListSize: options.maxListSize ?? 1000,
    defaultListSize: options.defaultListSize ?? 200,
    accessFor: (user: ContextUser | undefined) => services.accessService.forUser(user),
    repository: (name: string) => repositories.get(name) as Repository,
    attributes: services.attributes,
    presenter: registry.presenter,
  };
  for (const m of schema.entities.values()) repositories.set(m.name, new Repository(env, m));
}

/** Jobs (upsert, mass update) on pg-boss (default on PostgreSQL) or in this process. */
export function createJobs({ options, database, schema, repositories, logger }: InstanceBase): JobService {
  const jobStore = new JobStore(database, schema.entity('Job') as EntityModel);
  const usePgBoss = (options.jobs?.queue ?? database.dialect.defaultJobQueue) === 'pg-boss';
  const queue = usePgBoss
    ? new PgBossQueue({
        connectionString: options.database,
        expireInSeconds: options.jobs?.expireInSeconds,
        statementTimeoutMs: options.statementTimeoutMs,
        running: () => jobStore.running(),
        startDelayMs: options.jobs?.startDelayMs,
      })
    : new InProcessQueue(() => jobStore.unfinished(), options.jobs?.startDelayMs);
  const authStore = new AuthStore(database, schema.entity('User') as EntityModel, schema.entity('Role') as EntityModel);
  const jobs = new JobService(jobStore, queue, { loadUser: (id) => authStore.userById(id), logger });
  const lookup = (name: string) => repositories.get(name);
  jobs.register('upsert', upsertJob(lookup));
  jobs.register('massUpdate', massUpdateJob(lookup));
  return jobs;
}

/** `Idempotency-Key`: answers kept in the database, per user and key (option `idempotency`). */
export function createIdempotency({ options, database, logger }: InstanceBase): IdempotencyKeys {
  return new IdempotencyKeys(new IdempotencyStore(database), {
    keepMs: (options.idempotency?.keepHours ?? DEFAULT_KEEP_HOURS) * 3_600_000,
    leaseMs: (options.idempotency?.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000,
    logger,
  });
}
