/**
 * Short messages between the processes that share one database, on named channels: a cache to
 * drop, a change to fan out. PostgreSQL carries them with NOTIFY; with SQLite (one process) they
 * go straight to this process's listeners. The dialect says which (`Dialect.notifications`).
 */
export interface NotificationHandlers {
  /** A message on one of the channels listened to, from another process or this one. */
  onMessage(channel: string, payload: string): void;
  /** Messages may have been missed (the listening connection dropped and came back). */
  onReset(): void;
}

export interface Notifications {
  /** Starts listening on `channels` (again, after a failed start). */
  start(channels: readonly string[], handlers: NotificationHandlers): Promise<void>;
  publish(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

/** Within one process the listeners are told directly; nothing crosses to other processes. */
export class LocalNotifications implements Notifications {
  private handlers?: NotificationHandlers;
  private channels = new Set<string>();

  async start(channels: readonly string[], handlers: NotificationHandlers): Promise<void> {
    this.channels = new Set(channels);
    this.handlers = handlers;
  }

  async publish(channel: string, payload: string): Promise<void> {
    if (this.channels.has(channel)) this.handlers?.onMessage(channel, payload);
  }

  async close(): Promise<void> {
    this.handlers = undefined;
  }
}
