import type { InstanceBase } from '../app-services';
import { lastChangeAt } from '../sql/change-store';
import { sqlContext } from '../sql/sql-context';
import { onChangesCommitted } from '../sql/transaction';
import { ChangeFeed } from './change-feed';
import { unixSeconds } from './listening';
import { Subscriptions } from './subscriptions';

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

export function createEvents({ database, schema, registry }: InstanceBase): InstanceEvents {
  const feed = new ChangeFeed(database, { schema, notifications: database.dialect.notifications(database.knex) });
  onChangesCommitted(database, () => feed.announce());
  const subscriptions = new Subscriptions({ feed, schema });
  return {
    feed,
    subscriptions,
    async publicData() {
      const last = await lastChangeAt(sqlContext({ database, schema }, database.knex));
      const data: Record<string, unknown> = { dataTimestamp: last ? unixSeconds(last) : 0 };
      for (const [key, provide] of registry.publicData) data[key] = await provide();
      return data;
    },
    start: () => feed.start(),
    async close() {
      subscriptions.closeAll();
      await feed.close();
    },
  };
}
