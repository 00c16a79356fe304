import type { AccessService } from './auth/access-service';
import type { AuthService } from './auth/auth-service';
import type { InstanceBase } from './app-services';
import { ensureAdmin } from './ensure-admin';
import type { Traffic } from './http/traffic';
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
}

/** Syncs the schema, listens for cache events, creates the admin, runs plugins' ready callbacks, starts jobs. */
async function startInstance({ options, registry, schema, database, repositories }: InstanceBase, services: LifecycleServices): Promise<void> {
  const { auth, accessService } = services;
  await syncSchema(database, schema, registry.tables);
  await services.cacheEvents.start({
    onEvent: (event) => (event.kind === 'role' ? accessService.forgetRole(event.id) : auth.forget(event)),
    onReset: () => {
      auth.forgetAll();
      accessService.forgetAll();
    },
  });
  if (options.admin) await ensureAdmin({ repository: () => repositories.get('User') as never }, options.admin);
  for (const fn of registry.readyCallbacks) await fn();
  await services.jobs.start(options.jobs?.worker !== false);
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
      await services.traffic.drain(base.options.closeGraceMs ?? 10_000);
      if (readyPromise) await readyPromise.catch(() => undefined);
      await services.jobs.stop();
      for (const fn of [...base.registry.closeCallbacks].reverse()) await fn();
      await services.cacheEvents.close();
      await base.database.close();
    })());
  return { ready, close };
}
