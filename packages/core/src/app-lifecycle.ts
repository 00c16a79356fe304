import type { AccessService } from './auth/access-service';
import type { AuthService } from './auth/auth-service';
import type { InstanceBase } from './app-services';
import { ensureAdmin } from './ensure-admin';
import type { Traffic } from './http/traffic';
import type { IdempotencyKeys } from './idempotency/idempotency-keys';
import type { InstanceEvents } from './events/events';
import type { InstanceWebhooks } from './events/webhooks';
import type { JobService } from './jobs/job-service';
import type { CacheEvents } from './sql/cache-events';
import { syncSchema } from './sql/schema-sync';

/** What starts and stops with an instance. */
interface LifecycleServices {
  cacheEvents: CacheEvents;
  accessService: AccessService;
  auth: AuthService;
  jobs: JobService;
  traffic: Traffic;
  events: InstanceEvents;
  webhooks: InstanceWebhooks;
  idempotency: IdempotencyKeys;
}

/** Syncs the schema, listens for cache events, creates the admin, runs plugins' ready callbacks, starts jobs and webhook deliveries. */
async function startInstance({ options, registry, schema, database, repositories, logger }: InstanceBase, services: LifecycleServices): Promise<void> {
  const { auth, accessService } = services;
  const started = Date.now();
  const steps = await syncSchema(database, schema, { auxiliary: registry.tables, warn: (message, err) => logger.warn({ err }, message) });
  // The statement itself at debug, beside every other statement: info stays one line a step.
  for (const step of steps) logger.info({ step: step.description }, `schema: ${step.description}`);
  await services.cacheEvents.start({
    onEvent: (event) => {
      if (event.kind === 'role') accessService.forgetRole(event.id);
      else if (event.kind === 'webhook') services.webhooks.directory.heard();
      else auth.forget(event);
      if (event.kind !== 'webhook') services.events.subscriptions.recheckAll(event);
    },
    onReset: () => {
      auth.forgetAll();
      accessService.forgetAll();
      services.webhooks.directory.heard();
      services.events.subscriptions.recheckAll();
    },
  });
  await services.events.start();
  services.idempotency.start();
  if (options.admin) await createAdmin(base(repositories), { admin: options.admin, logger });
  for (const fn of registry.readyCallbacks) await fn();
  await services.jobs.start(options.jobs?.worker !== false);
  await services.webhooks.start(options.jobs?.worker !== false);
  logger.info(
    { entities: schema.entities.size, database: database.dialect.name, schemaSteps: steps.length, worker: options.jobs?.worker !== false, ms: Date.now() - started },
    `ready: ${schema.entities.size} entity types on ${database.dialect.name}`,
  );
}

const base = (repositories: InstanceBase['repositories']) => ({ repository: () => repositories.get('User') as never });

/**
 * The `admin` option's user; a password generated for it (none was given) is logged once at
 * warn, so that it is never lost.
 */
async function createAdmin(api: Parameters<typeof ensureAdmin>[0], { admin, logger }: { admin: { userName: string; password?: string }; logger: InstanceBase['logger'] }): Promise<void> {
  const result = await ensureAdmin(api, admin);
  if (result.created) logger.info({ userName: admin.userName }, `created the admin user '${admin.userName}'`);
  if (result.password) {
    logger.warn({ userName: admin.userName }, `created user '${admin.userName}' with the generated password ${result.password} (shown only this once; set admin.password to choose one)`);
  }
}

/** `ready()` (once, and again after a failed start) and `close()` of an instance. */
export function instanceLifecycle(base: InstanceBase, services: LifecycleServices): { ready: () => Promise<void>; close: () => Promise<void> } {
  let readyPromise: Promise<void> | undefined;
  // A failed start (database down) is tried again by the next request.
  const ready = () =>
    (readyPromise ??= startInstance(base, services).catch((error) => {
      readyPromise = undefined;
      throw error;
    }));
  // Requests first (they may start jobs and write files), then jobs (handed back at their next
  // safe point), then plugins (whose storage the jobs and requests used), the pool last.
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // New requests are refused from this moment. Event streams never end on their own: they
      // end first, and their clients reconnect elsewhere.
      const drained = services.traffic.drain(base.options.closeGraceMs ?? 10_000);
      await services.events.close();
      await drained;
      services.idempotency.close();
      if (readyPromise) await readyPromise.catch(() => undefined);
      await services.jobs.stop();
      await services.webhooks.stop();
      for (const fn of [...base.registry.closeCallbacks].reverse()) await fn();
      await services.cacheEvents.close();
      await base.database.close();
    })());
  return { ready, close };
}
