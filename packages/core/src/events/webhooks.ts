import { randomUUID } from 'node:crypto';
import type { InstanceBase } from '../app-services';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import { notFound, validationFailed } from '../errors';
import type { Registry } from '../registry';
import { allowedHostSet } from '../net/outgoing-guard';
import type { Repository } from '../records/repository';
import type { CacheEvent } from '../sql/cache-events';
import { routeChanges } from '../sql/change-routing';
import { purgeDeliveries, redeliver, release } from '../sql/delivery-store';
import { sqlContext } from '../sql/sql-context';
import { WebhookDirectory } from './webhook-directory';
import { WebhookDispatcher, type DispatchOptions } from './webhook-dispatcher';

/** Defaults of the option `webhooks`: 8 attempts 30 s, 1, 2, 4, 8, 16 and 32 min apart (about an hour). */
export const WEBHOOK_DEFAULTS = { maxAttempts: 8, retryBaseMs: 30_000, timeoutMs: 10_000, leaseMs: 60_000, pollMs: 5_000, concurrency: 8 } as const;

/** The webhooks of an instance: routing of changes, the worker, redelivery, the checks of Webhook writes. */
export interface InstanceWebhooks {
  directory: WebhookDirectory;
  /** `POST /WebhookDelivery/{id}/redeliver`: queued again, due now; answers the delivery. */
  redeliver(ctx: RequestContext, id: string): Promise<ApiRecord>;
  /** Removes finished deliveries last changed before `before`; answers how many. */
  purge(before: string): Promise<number>;
  /** Reads the active webhooks; a worker process also starts delivering. */
  start(worker: boolean): Promise<void>;
  /** Wakes the worker: another process committed changes (it may have made deliveries). */
  changesCommitted(): void;
  stop(): Promise<void>;
}

/** How long a redelivered delivery waits for its answer to be read before workers may take it. */
const REDELIVER_HOLD_MS = 30_000;

const invalid = (field: string, message: string) => validationFailed(message, [{ path: [field], code: 'invalid_format', message }]);

/** A webhook's `url` must be an absolute http or https URL; its `entityTypes` must name entity types of the instance. */
function installWebhookChecks(registry: Registry, knownEntity: (name: string) => boolean): void {
  const check = ({ data }: { data?: Record<string, unknown> }) => {
    const { url, entityTypes } = data ?? {};
    if (typeof url === 'string') {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw invalid('url', 'url must be an absolute http or https URL');
    }
    if (Array.isArray(entityTypes)) {
      const unknown = entityTypes.filter((name) => typeof name === 'string' && !knownEntity(name));
      if (unknown.length) throw invalid('entityTypes', `entityTypes names unknown entity types: ${unknown.join(', ')}`);
    }
  };
  registry.onRecord('beforeCreate', 'Webhook', check);
  registry.onRecord('beforeUpdate', 'Webhook', check);
}

/** The option `webhooks` with its defaults filled in. */
export function dispatchOptions(options: InstanceBase['options']['webhooks'] = {}): DispatchOptions {
  return {
    maxAttempts: options.maxAttempts ?? WEBHOOK_DEFAULTS.maxAttempts,
    retryBaseMs: options.retryBaseMs ?? WEBHOOK_DEFAULTS.retryBaseMs,
    timeoutMs: options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs,
    leaseMs: options.leaseMs ?? WEBHOOK_DEFAULTS.leaseMs,
    pollMs: options.pollMs ?? WEBHOOK_DEFAULTS.pollMs,
    concurrency: options.concurrency ?? WEBHOOK_DEFAULTS.concurrency,
    allowedHosts: allowedHostSet(options.allowedHosts),
    lookup: options.lookup,
  };
}

/**
 * Webhooks (CONTRACT §16): every matching change gets a delivery in the transaction that logs
 * it (routing through the directory), and the worker of every process sends them.
 */
export function createWebhooks(base: InstanceBase, { announce }: { announce: (event: CacheEvent) => Promise<unknown> }): InstanceWebhooks {
  const { database, schema, registry, repositories, logger, options } = base;
  const sql = () => sqlContext({ database, schema }, database.knex);
  const directory = new WebhookDirectory({ database, schema, announce, onDeliveries: () => dispatcher.wake() });
  const dispatcher = new WebhookDispatcher(sql, dispatchOptions(options.webhooks), { logger, anyActive: () => directory.anyActive });
  routeChanges(database, directory);
  installWebhookChecks(registry, (name) => schema.entities.has(name));
  let working = false;
  return {
    directory,
    async redeliver(ctx, id) {
      const deliveries = repositories.get('WebhookDelivery') as Repository;
      // Admins only, and 404 for a delivery that does not exist, as a read of it.
      await deliveries.get(ctx, id, { select: ['id'] });
      // Held while it is read, so that the answer shows it queued whatever the workers do.
      const hold = { lease: `redeliver-${randomUUID()}`, ms: REDELIVER_HOLD_MS };
      if (!(await redeliver(sql(), id, hold))) throw notFound('WebhookDelivery', id);
      try {
        return await deliveries.get(ctx, id);
      } finally {
        await release(sql(), id, hold.lease);
        dispatcher.wake();
      }
    },
    purge: (before) => purgeDeliveries(sql(), before),
    async start(worker) {
      await directory.active();
      if (worker && !working) {
        working = true;
        dispatcher.start();
      }
    },
    changesCommitted() {
      if (directory.anyActive) dispatcher.wake();
    },
    async stop() {
      await directory.stop();
      await dispatcher.stop();
    },
  };
}
