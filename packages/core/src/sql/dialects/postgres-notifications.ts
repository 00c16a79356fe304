import type { Knex } from 'knex';
import type { NotificationHandlers, Notifications } from '../notifications';

const RETRY_MS = 1000;

interface PgConnection {
  query(sql: string, values?: unknown[]): Promise<unknown>;
  on(event: 'notification', fn: (message: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', fn: (error?: Error) => void): void;
  removeAllListeners(): void;
}

interface RawClient {
  acquireRawConnection(): Promise<PgConnection>;
  destroyRawConnection(connection: PgConnection): Promise<void>;
}

const quoted = (channel: string) => `"${channel.replaceAll('"', '""')}"`;

/**
 * NOTIFY between processes: one listening connection per process, outside the pool. A process
 * whose listening connection drops reports a reset (messages may be lost) and listens again.
 */
export class PostgresNotifications implements Notifications {
  private connection?: PgConnection;
  private handlers?: NotificationHandlers;
  private channels: readonly string[] = [];
  private closed = false;
  private retry?: NodeJS.Timeout;
  /** The last message sent or being sent; the next waits for it. */
  private sending: Promise<unknown> = Promise.resolve();
  /** Messages not yet sent, by channel and payload. */
  private readonly waiting = new Map<string, Promise<void>>();

  constructor(private readonly knex: Knex) {}

  private get client(): RawClient {
    return this.knex.client as unknown as RawClient;
  }

  async start(channels: readonly string[], handlers: NotificationHandlers): Promise<void> {
    this.channels = channels;
    this.handlers = handlers;
    // A start that is tried again (after a failure later in ready()) keeps its connection.
    if (!this.connection) await this.listen();
  }

  private async listen(): Promise<void> {
    const connection = await this.client.acquireRawConnection();
    connection.on('notification', (message) => {
      if (this.channels.includes(message.channel)) this.handlers?.onMessage(message.channel, message.payload ?? '');
    });
    const lost = () => this.lost(connection);
    connection.on('error', lost);
    connection.on('end', lost);
    for (const channel of this.channels) await connection.query(`LISTEN ${quoted(channel)}`);
    if (this.closed) return void (await this.client.destroyRawConnection(connection));
    this.connection = connection;
  }

  /** Anything published while nobody listened is unknown: report a reset, then listen again. */
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

  /**
   * Sent on the listening connection when there is one (a message takes no connection of the
   * pool), one at a time: a connection runs one query at a time. A message equal to one still
   * waiting to be sent is sent once.
   */
  publish(channel: string, payload: string): Promise<void> {
    const key = `${channel}\u0000${payload}`;
    const waiting = this.waiting.get(key);
    if (waiting) return waiting;
    const send = this.sending.then(async () => {
      this.waiting.delete(key);
      if (this.connection) await this.connection.query('select pg_notify($1, $2)', [channel, payload]);
      else await this.knex.raw('select pg_notify(?, ?)', [channel, payload]);
    });
    this.waiting.set(key, send);
    this.sending = send.catch(() => undefined);
    return send;
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
