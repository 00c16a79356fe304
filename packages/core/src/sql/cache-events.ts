import type { Database } from './database';
import type { Notifications } from './notifications';

/** What a process tells the others sharing its database: drop what you cached of this. */
export type CacheEvent = { kind: 'token' | 'user' | 'role' | 'webhook'; id: string };

export interface CacheEventHandlers {
  /** Another process (or this one) changed the thing named. */
  onEvent(event: CacheEvent): void;
  /** Events may have been missed (the listening connection dropped): drop every cache. */
  onReset(): void;
}

/**
 * Spreads cache invalidations between the processes of one database, so that a token revoked,
 * a user deactivated, a role or a webhook changed through one process stops counting in all of them at
 * once (the dialect's notifications: NOTIFY on PostgreSQL). SQLite has no such channel: there the
 * time-limited caches are the bound (and one process is the usual case).
 */
export interface CacheEvents {
  start(handlers: CacheEventHandlers): Promise<void>;
  publish(event: CacheEvent): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL = 'entity_records_cache';

function parse(payload: string): CacheEvent | undefined {
  const at = payload.indexOf(':');
  if (at < 0) return undefined;
  const kind = payload.slice(0, at);
  if (kind !== 'token' && kind !== 'user' && kind !== 'role' && kind !== 'webhook') return undefined;
  return { kind, id: payload.slice(at + 1) };
}

export function openCacheEvents(database: Database): CacheEvents {
  const notifications: Notifications = database.dialect.notifications(database.knex);
  return {
    start: (handlers) =>
      notifications.start([CHANNEL], {
        onMessage(_channel, payload) {
          const event = parse(payload);
          if (event) handlers.onEvent(event);
        },
        onReset: () => handlers.onReset(),
      }),
    publish: (event) => notifications.publish(CHANNEL, `${event.kind}:${event.id}`),
    close: () => notifications.close(),
  };
}
