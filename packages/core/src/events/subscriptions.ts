import type { UserAccess } from '../auth/access-control';
import type { ContextUser } from '../context';
import type { CacheEvent } from '../sql/cache-events';
import type { SchemaModel } from '../definition/model';
import type { StoredChange } from '../sql/change-store';
import type { ChangeFeed } from './change-feed';
import { readableDiff } from './stream';

/** A comment line this often keeps proxies from closing an idle stream (unless `events.heartbeatSeconds` says otherwise). */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Bytes a subscriber may leave unread before it is dropped (it resumes with `Last-Event-ID`). */
const MAX_BUFFERED = 1024 * 1024;
/** A replay writes on while the client has less than this unread; then it waits until the client reads. */
const REPLAY_HIGH_WATER = 64 * 1024;
/** Changes read per query of a replay. */
const REPLAY_BATCH = 500;
/** Live changes kept while a replay runs; past it, the replay reads them from the log instead. */
const HELD_MAX = 1000;

/** Where a subscription writes: a server-sent event stream. */
export interface EventSink {
  write(chunk: string): void;
  /** Bytes written but not yet taken by the client. */
  buffered(): number;
  /** Resolves once the client took what was buffered, or the stream closed. */
  drained(): Promise<void>;
  /** Whether the client went away. */
  closed(): boolean;
  end(): void;
  /** Cuts the connection off, dropping what is buffered (a subscriber too slow to keep). */
  destroy(): void;
}

/** What a subscriber asked for, and who it is. */
export interface SubscriptionOptions {
  user?: ContextUser;
  /** Only changes of these entity types, or of these records (empty: all). */
  entities: ReadonlySet<string>;
  ids: ReadonlySet<string>;
  /** Replays the changes after this seq first (`Last-Event-ID`). */
  after?: number;
  /** The subscriber's rights now; undefined when its session ended (the stream ends). */
  access: () => Promise<UserAccess | undefined>;
  /**
   * Whether the changed record is one the subscriber's row rules keep: undefined when none apply
   * to its entity type (no query), else the answer of one.
   */
  withinRules?: (change: StoredChange) => Promise<boolean> | undefined;
  /** Whether a cache event may change what the subscriber sees (its token, its user, any role); all when absent. */
  concerns?: (event: CacheEvent) => boolean;
}

/** The event of a change as a subscriber may see it (CONTRACT §16), or undefined. */
export function eventOf(schema: SchemaModel, { access, user, change }: { access: UserAccess; user?: ContextUser; change: StoredChange }): string | undefined {
  const model = schema.entity(change.entityType);
  if (!model) return undefined;
  const scope = access.scope(model.name);
  if (!scope.stream || scope.read === 'no') return undefined;
  if (scope.read === 'own' && !access.unrestricted && change.ownerId !== user?.id && change.assigneeId !== user?.id) return undefined;
  const data = {
    seq: change.seq,
    entityType: change.entityType,
    recordId: change.recordId,
    action: change.action,
    diff: readableDiff(schema, model, { access, diff: change.diff }),
    userId: change.userId,
    createdAt: change.createdAt,
  };
  return `id: ${change.seq}\nevent: ${change.action}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The server-sent event streams of this process, fed by the change feed. */
export class Subscriptions {
  /** Each open stream: how to end it, how to make it ask again what its subscriber may see, and which cache events concern it. */
  private readonly open = new Map<(how?: { drop?: boolean }) => void, { recheck: () => void; concerns?: (event: CacheEvent) => boolean }>();

  constructor(private readonly parts: { feed: ChangeFeed; schema: SchemaModel; heartbeatMs: number }) {}

  /** How many streams are open. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Streams the changes the subscriber may see: first those after `after` still in the log, in
   * order, then each new one. Answers a function that ends the stream.
   */
  async subscribe(sink: EventSink, options: SubscriptionOptions): Promise<() => void> {
    const { feed, schema } = this.parts;
    let access = await options.access();
    let replaying = options.after !== undefined;
    /** The last seq this subscriber got (or skipped as not wanted). */
    let sent = 0;
    let held: StoredChange[] = [];
    let overflowed = false;
    const isOpen = () => this.open.has(end) && !sink.closed();
    const wanted = (c: StoredChange) => (options.entities.size === 0 || options.entities.has(c.entityType)) && (options.ids.size === 0 || options.ids.has(c.recordId));
    // An event whose record a row rule must judge waits for the answer; those after it wait too (order).
    let waiting = 0;
    let queue: Promise<void> = Promise.resolve();
    const emit = (event: string) => {
      sink.write(event);
      // A subscriber that does not read its stream is dropped, so that memory stays bounded (a
      // replay waits for the client instead).
      if (!replaying && sink.buffered() > MAX_BUFFERED) end({ drop: true });
    };
    /** Sends a change once it is judged (row rules may need a query; a recheck of the rights may be under way). */
    const deliver = async (change: StoredChange) => {
      const event = access && isOpen() ? eventOf(schema, { access, user: options.user, change }) : undefined;
      if (event !== undefined && ((await options.withinRules?.(change)) ?? true) && isOpen()) emit(event);
    };
    /** Runs `step` after every step queued before it; writes wait while any step is queued. */
    const enqueue = (step: () => Promise<void>) => {
      waiting++;
      queue = queue
        .then(step)
        // A failed step ends the stream (the client resumes with Last-Event-ID).
        .catch(() => end())
        .finally(() => void waiting--);
    };
    const write = (change: StoredChange) => {
      if (change.seq <= sent || !access || !isOpen()) return;
      sent = change.seq;
      if (!wanted(change)) return;
      if (waiting > 0) return enqueue(() => deliver(change));
      const event = eventOf(schema, { access, user: options.user, change });
      if (event === undefined) return;
      const within = options.withinRules?.(change);
      if (within === undefined) return emit(event);
      within.catch(() => undefined);
      enqueue(async () => {
        if ((await within) && isOpen()) emit(event);
      });
    };
    /** Asks again what the subscriber may see (a token, user or role changed); the changes meanwhile wait for the answer. */
    const recheck = () =>
      enqueue(async () => {
        access = await options.access().catch(() => access);
        if (!access) end();
      });
    const live = (change: StoredChange) => {
      if (!replaying) return write(change);
      if (held.length < HELD_MAX) held.push(change);
      else overflowed = true;
    };
    const unlisten = await feed.listen(live);
    const mark = feed.highWaterMark;
    // A Last-Event-ID past every change ever written (a log restored from a backup, an id of
    // another instance, a made-up number) names no change to resume after: the stream starts
    // now, as without one, rather than keep back every change until the log reaches that number.
    const after = options.after !== undefined && options.after > mark && options.after > (await feed.lastWritten()) ? undefined : options.after;
    sent = after ?? mark;
    // Each heartbeat also asks again (a process that missed a cache event learns of it here).
    const heartbeat = setInterval(() => {
      recheck();
      enqueue(async () => {
        if (isOpen()) sink.write(': keep-alive\n\n');
      });
    }, this.parts.heartbeatMs);
    heartbeat.unref();
    /** Ends the stream; a dropped one is cut off, so that what it left unread is freed at once. */
    const end = ({ drop = false } = {}) => {
      if (!this.open.delete(end)) return;
      unlisten();
      clearInterval(heartbeat);
      if (drop) sink.destroy();
      else sink.end();
    };
    this.open.set(end, { recheck, concerns: options.concerns });
    if (!access) end();
    // The replay goes at the pace the client reads (a long absence is no reason to drop it); the
    // live changes meanwhile are held, or read from the log by one more round when too many came.
    while (replaying && isOpen()) {
      const missed = await feed.replay(sent, REPLAY_BATCH);
      for (const change of missed) {
        write(change);
        if (waiting > 0) await queue;
        if (sink.buffered() > REPLAY_HIGH_WATER) await sink.drained();
      }
      if (missed.length === REPLAY_BATCH) continue;
      if (!overflowed) replaying = false;
      overflowed = false;
      if (replaying) held = [];
    }
    for (const change of held.splice(0)) live(change);
    return end;
  }

  /** Ends every stream (the instance closes: the clients reconnect elsewhere, with Last-Event-ID). */
  closeAll(): void {
    for (const end of [...this.open.keys()]) end();
  }

  /**
   * Makes every stream ask again what its subscriber may see, before it sends anything more: a
   * token was revoked, a user or a role changed, in this process or another one (cache events).
   * The changes that come meanwhile wait for the answer, so none reaches a subscriber that lost
   * the right to it; a stream whose session ended is ended. With the event, only the streams it
   * concerns (a sign-out elsewhere costs the others nothing); without, all (events were missed).
   */
  recheckAll(event?: CacheEvent): void {
    for (const { recheck, concerns } of this.open.values()) if (!event || !concerns || concerns(event)) recheck();
  }
}
