import type { Database } from './database';

/** What a process tells the others sharing its database: drop what you cached of this. */
export type CacheEvent = { kind: 'token' | 'user' | 'role'; id: string };

export interface CacheEventHandlers {
  /** Another process (or this one) changed the thing named. */
  onEvent(event: CacheEvent): void;
  /** Events may have been missed (the listening connection dropped): drop every cache. */
  onReset(): void;
}

/**
 * Spreads cache invalidations between the processes of one database, so that a token revoked,
 * a user deactivated or a role changed through one process stops counting in all of them at
 * once. PostgreSQL carries them with NOTIFY on one listening connection per process; a process
 * whose listening connection drops forgets every cached entry and listens again. SQLite has no
 * such channel: there the time-limited caches are the bound (and one process is the usual case).
 */
export interface CacheEvents {
  start(handlers: CacheEventHandlers): Promise<void>;
  publish(event: CacheEvent): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL = 'entity_records_cache';
const RETRY_MS = 1000;

interface PgConnection {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', fn: (message: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', fn: (error?: Error) => void): void;
  removeAllListeners(): void;
}

interface RawClient {
  acquireRawConnection(): Promise<PgConnection>;
  destroyRawConnection(connection: PgConnection): Promise<void>;
}

function parse(payload: string | undefined): CacheEvent | undefined {
  const at = payload?.indexOf(':') ?? -1;
  if (!payload || at < 0) return undefined;
  const kind = payload.slice(0, at);
  if (kind !== 'token' && kind !== 'user' && kind !== 'role') return undefined;
  return { kind, id: payload.slice(at + 1) };
}

class PostgresCacheEvents implements CacheEvents {
  private connection?: PgConnection;
  private handlers?: CacheEventHandlers;
  private closed = false;
  private retry?: NodeJS.Timeout;

  constructor(private readonly database: Database) {}

  private get client(): RawClient {
    return this.database.knex.client as unknown as RawClient;
  }

  async start(handlers: CacheEventHandlers): Promise<void> {
    this.handlers = handlers;
    // A start that is tried again (after a failure later in ready()) keeps its connection.
    if (!this.connection) await this.listen();
  }

  private async listen(): Promise<void> {
    const connection = await this.client.acquireRawConnection();
    connection.on('notification', (message) => {
      const event = message.channel === CHANNEL ? parse(message.payload) : undefined;
      if (event) this.handlers?.onEvent(event);
    });
    const lost = () => this.lost(connection);
    connection.on('error', lost);
    connection.on('end', lost);
    await connection.query(`LISTEN ${CHANNEL}`);
    if (this.closed) return void (await this.client.destroyRawConnection(connection));
    this.connection = connection;
  }

  /** Anything published while nobody listened is unknown: forget all, then listen again. */
  private lost(connection: PgConnection): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    this.quiet(connection);
    this.client.destroyRawConnection(connection).catch(() => undefined);
    this.handlers?.onReset();
    const again = () => {
      if (this.closed) return;
      this.listen().catch(() => (this.retry = setTimeout(again, RETRY_MS)));
    };
    this.retry = setTimeout(again, RETRY_MS);
  }

  async publish(event: CacheEvent): Promise<void> {
    await this.database.knex.raw('select pg_notify(?, ?)', [CHANNEL, `${event.kind}:${event.id}`]);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    this.quiet(connection);
    await this.client.destroyRawConnection(connection);
  }

  /** A connection given up on may still emit 'error' (an unhandled one would crash the process). */
  private quiet(connection: PgConnection): void {
    connection.removeAllListeners();
    connection.on('error', () => undefined);
  }
}

/** Within one process the caches are told directly; nothing crosses to other processes. */
class LocalCacheEvents implements CacheEvents {
  private handlers?: CacheEventHandlers;

  async start(handlers: CacheEventHandlers): Promise<void> {
    this.handlers = handlers;
  }

  async publish(event: CacheEvent): Promise<void> {
    this.handlers?.onEvent(event);
  }

  async close(): Promise<void> {}
}

export function openCacheEvents(database: Database): CacheEvents {
  return database.dialect.name === 'postgres' ? new PostgresCacheEvents(database) : new LocalCacheEvents();
}
