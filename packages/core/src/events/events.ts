import type { InstanceBase } from '../app-services';
import { lastChangeAt, purgeChanges } from '../sql/change-store';
import { forgetListening } from '../sql/listening-store';
import { formatDateTime } from '../time';
import { sqlContext } from '../sql/sql-context';
import { onChangesCommitted } from '../sql/transaction';
import { ChangeFeed } from './change-feed';
import { LISTENING_MS, unixSeconds } from './listening';
import { DEFAULT_HEARTBEAT_MS, Subscriptions } from './subscriptions';

/** The readers of an instance's change log: the feed of this process, its event streams, the public data. */
export interface InstanceEvents {
  feed: ChangeFeed;
  subscriptions: Subscriptions;
  /** `GET /data/publicData.json`: `dataTimestamp` (Unix seconds of the last change of anything), then what plugins add. */
  publicData(): Promise<Record<string, unknown>>;
  start(): Promise<void>;
  /** Ends the event streams (before requests drain: they would never end on their own), then the feed. */
  close(): Promise<void>;
}

/** Days a change stays in the log unless `changes.retentionDays` says otherwise. */
export const DEFAULT_RETENTION_DAYS = 30;
/** How often each process sweeps the log (every process does: a sweep of another one meanwhile is harmless). */
const SWEEP_MS = 60 * 60 * 1000;

export function createEvents({ database, schema, registry, options, logger }: InstanceBase, { purgeDeliveries }: { purgeDeliveries: (before: string) => Promise<number> }): InstanceEvents {
  const feed = new ChangeFeed(database, { schema, notifications: database.dialect.notifications(database.knex) });
  const sql = sqlContext({ database, schema }, database.knex);
  const retentionMs = (options.changes?.retentionDays ?? DEFAULT_RETENTION_DAYS) * 24 * 60 * 60 * 1000;
  let sweeper: NodeJS.Timeout | undefined;
  /** Removes the changes and finished webhook deliveries older than the retention, and listening older than eight hours. */
  const sweep = async () => {
    const before = formatDateTime(new Date(Date.now() - retentionMs));
    const purged = await purgeChanges(sql, before);
    const deliveries = await purgeDeliveries(before);
    await forgetListening(sql, Date.now() - LISTENING_MS);
    if (purged > 0) logger.info({ purged }, `removed ${purged} changes older than the retention`);
    if (deliveries > 0) logger.info({ deliveries }, `removed ${deliveries} finished webhook deliveries older than the retention`);
  };
  const sweepQuietly = () => void sweep().catch((error) => logger.warn({ err: error }, 'the change log sweep failed; it runs again within the hour'));
  onChangesCommitted(database, () => feed.announce());
  const heartbeatMs = (options.events?.heartbeatSeconds ?? DEFAULT_HEARTBEAT_MS / 1000) * 1000;
  const subscriptions = new Subscriptions({ feed, schema, heartbeatMs });
  return {
    feed,
    subscriptions,
    async publicData() {
      const last = await lastChangeAt(sql);
      const data: Record<string, unknown> = { dataTimestamp: last ? unixSeconds(last) : 0 };
      for (const [key, provide] of registry.publicData) data[key] = await provide();
      return data;
    },
    async start() {
      await feed.start();
      sweepQuietly();
      sweeper ??= setInterval(sweepQuietly, SWEEP_MS);
      sweeper.unref();
    },
    async close() {
      clearInterval(sweeper);
      sweeper = undefined;
      subscriptions.closeAll();
      await feed.close();
    },
  };
}
