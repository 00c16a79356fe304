import { changesAfter, changeWriters, lastSeq, type StoredChange } from '../sql/change-store';
import type { Database } from '../sql/database';
import type { Notifications } from '../sql/notifications';
import { sqlContext } from '../sql/sql-context';
import type { SchemaModel } from '../definition/model';

/** The channel a process tells the others on that changes were committed. */
const CHANNEL = 'entity_records_changes';
/** Changes read per query. */
const BATCH = 1000;
/**
 * How long a gap in `seq` may stay open before it counts as a rolled-back write where the database
 * cannot tell who is writing (see `changeWriters`): a seq is taken when a change is written and
 * becomes visible when its transaction commits, a moment later.
 */
const GAP_MS = 2000;
/** How long a gap stays open before the feed asks who is writing changes (most fill within milliseconds; the question takes the lock table's locks). */
const GAP_LOOK_MS = 100;
/** How long a gap waits at most for a transaction that still writes changes (one left open, say). */
const GAP_MAX_MS = 60_000;
/** How often the feed looks for changes without being told (a lost notification, a reset). */
const POLL_MS = 1000;

/** A seq missing at the mark: since when, who was writing changes once it was seen, and whether they have all ended. */
interface Gap {
  seq: number;
  since: number;
  writers?: Set<string>;
  ended: boolean;
}

/** Someone who gets every change, in `seq` order, once it is final. */
export type ChangeListener = (change: StoredChange) => void;

/**
 * The changes of every process sharing the database, in `seq` order, to the listeners of this
 * process (server-sent events). Each process keeps a high-water mark: every change up to it is
 * committed and delivered. A gap (a change whose transaction has not committed yet) holds back the
 * changes after it until it fills, or until the write that took it has ended without it (rolled
 * back): on PostgreSQL, once every transaction that was writing changes when the gap was seen has
 * ended and a read after that still misses it; elsewhere after `GAP_MS`. Passing a gap sooner
 * would lose a change that commits late: a client that saw a later seq reconnects after it.
 * Processes tell each other of commits through the dialect's notifications (NOTIFY) and look
 * every second anyway.
 */
export class ChangeFeed {
  private hwm = 0;
  private gap?: Gap;
  private readonly listeners = new Set<ChangeListener>();
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private again = false;
  private announced?: NodeJS.Timeout;
  private started = false;
  private readonly commitWatchers = new Set<() => void>();

  constructor(
    private readonly database: Database,
    private readonly parts: { schema: SchemaModel; notifications: Notifications },
  ) {}

  /** Every change up to this seq is final and was delivered. */
  get highWaterMark(): number {
    return this.hwm;
  }

  private get sql() {
    return sqlContext({ database: this.database, schema: this.parts.schema }, this.database.knex);
  }

  async start(): Promise<void> {
    if (this.started) return;
    const committed = () => {
      for (const watcher of this.commitWatchers) watcher();
      this.poll();
    };
    await this.parts.notifications.start([CHANNEL], { onMessage: committed, onReset: committed });
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
    this.started = true;
  }

  /**
   * Calls `watcher` whenever some process (this one included) tells of committed changes, and
   * after a lost notification: for workers that look in the database for what the changes made.
   */
  onCommitted(watcher: () => void): void {
    this.commitWatchers.add(watcher);
  }

  /** A write of this process committed changes: read them now, and tell the other processes soon. */
  announce(): void {
    if (!this.started) return;
    this.poll();
    // One notification per burst of writes: the others read every change since their mark anyway.
    this.announced ??= setTimeout(() => {
      this.announced = undefined;
      this.parts.notifications.publish(CHANNEL, '').catch(() => undefined);
    }, 5);
  }

  /**
   * Adds a listener. The feed reads only while someone listens: the first listener starts it at
   * the last change written (nobody missed anything before it).
   */
  async listen(listener: ChangeListener): Promise<() => void> {
    if (this.listeners.size === 0) {
      await this.polling;
      this.hwm = await lastSeq(this.sql);
      this.gap = undefined;
    }
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** The highest seq written to the log so far, by any process (0 while it is empty). */
  lastWritten(): Promise<number> {
    return lastSeq(this.sql);
  }

  /** The committed changes after `seq`, up to the high-water mark (a reconnecting subscriber's replay). */
  async replay(seq: number, limit = BATCH): Promise<StoredChange[]> {
    if (seq >= this.hwm) return [];
    return (await changesAfter(this.sql, { seq, limit })).filter((c) => c.seq <= this.hwm);
  }

  /** Reads what came after the mark (one read at a time; a call meanwhile reads again after it). */
  private poll(): void {
    if (this.listeners.size === 0) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = this.advance()
      .catch(() => undefined)
      .finally(() => {
        this.polling = undefined;
        if (this.again) {
          this.again = false;
          this.poll();
        }
      });
  }

  private async advance(): Promise<void> {
    for (;;) {
      const changes = await changesAfter(this.sql, { seq: this.hwm, limit: BATCH });
      let moved = false;
      let reread = false;
      for (const change of changes) {
        if (change.seq !== this.hwm + 1) {
          const gap = await this.atGap(this.hwm + 1);
          reread = gap === 'read';
          if (gap !== 'pass') break;
        }
        this.gap = undefined;
        this.hwm = change.seq;
        moved = true;
        for (const listener of this.listeners) listener(change);
      }
      if (reread) continue;
      if (!moved || changes.length < BATCH) return;
    }
  }

  /**
   * What to do at the gap at `seq`, which the last read missed: `pass` it (its write ended without
   * it), `read` again (every write seen with it has ended since that read: it may have committed),
   * or `wait` (for the next poll, which a commit anywhere brings).
   */
  private async atGap(seq: number): Promise<'pass' | 'read' | 'wait'> {
    const now = Date.now();
    if (this.gap?.seq !== seq) {
      this.gap = { seq, since: now, ended: false };
      return 'wait';
    }
    const gap = this.gap;
    if (gap.ended || now - gap.since >= GAP_MAX_MS) return 'pass';
    if (now - gap.since < GAP_LOOK_MS) return 'wait';
    // Where the lock table cannot be read, the rule of time holds (as where the database cannot tell).
    const writing = await changeWriters(this.sql).catch(() => undefined);
    if (!writing) return now - gap.since >= GAP_MS ? 'pass' : 'wait';
    // The first look: whoever took `seq` is among those writing now, or has ended (the read after
    // this one tells whether it committed).
    gap.writers ??= writing;
    gap.ended = ![...gap.writers].some((w) => writing.has(w));
    return gap.ended ? 'read' : 'wait';
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.announced);
    this.listeners.clear();
    this.started = false;
    await this.polling;
    await this.parts.notifications.close();
  }
}
