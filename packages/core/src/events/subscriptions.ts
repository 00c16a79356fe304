import type { UserAccess } from '../auth/access-control';
import type { ContextUser } from '../context';
import type { SchemaModel } from '../definition/model';
import type { StoredChange } from '../sql/change-store';
import type { ChangeFeed } from './change-feed';
import { readableDiff } from './stream';

/** A comment line this often keeps proxies from closing an idle stream (unless `events.heartbeatSeconds` says otherwise). */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** Bytes a subscriber may leave unread before it is dropped (it resumes with `Last-Event-ID`). */
const MAX_BUFFERED = 1024 * 1024;
/** Changes read per query of a replay. */
const REPLAY_BATCH = 500;

/** Where a subscription writes: a server-sent event stream. */
export interface EventSink {
  write(chunk: string): void;
  /** Bytes written but not yet taken by the client. */
  buffered(): number;
  end(): void;
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
    diff: readableDiff(model, { access, diff: change.diff }),
    userId: change.userId,
    createdAt: change.createdAt,
  };
  return `id: ${change.seq}\nevent: ${change.action}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The server-sent event streams of this process, fed by the change feed. */
export class Subscriptions {
  private readonly open = new Set<() => void>();

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
    const held: StoredChange[] = [];
    const wanted = (c: StoredChange) => (options.entities.size === 0 || options.entities.has(c.entityType)) && (options.ids.size === 0 || options.ids.has(c.recordId));
    const write = (event: string) => {
      sink.write(event);
      // A subscriber that does not read its stream is dropped, so that memory stays bounded.
      if (sink.buffered() > MAX_BUFFERED) end();
    };
    // An event whose record a row rule must judge waits for the answer; those after it wait too (order).
    let waiting = 0;
    let queue: Promise<void> = Promise.resolve();
    const send = (change: StoredChange) => {
      if (change.seq <= sent || !access) return;
      sent = change.seq;
      const event = wanted(change) ? eventOf(schema, { access, user: options.user, change }) : undefined;
      if (event === undefined) return;
      const within = options.withinRules?.(change);
      // Its failure is handled in the queue (the stream ends; the client resumes with Last-Event-ID).
      within?.catch(() => undefined);
      if (within === undefined && waiting === 0) return write(event);
      waiting++;
      queue = queue
        .then(async () => {
          if ((within === undefined || (await within)) && this.open.has(end)) write(event);
        })
        .catch(() => end())
        .finally(() => void waiting--);
    };
    const unlisten = await feed.listen((change) => (replaying ? held.push(change) : send(change)));
    sent = options.after ?? feed.highWaterMark;
    const heartbeat = setInterval(async () => {
      access = await options.access().catch(() => access);
      if (!access) return end();
      sink.write(': keep-alive\n\n');
    }, this.parts.heartbeatMs);
    heartbeat.unref();
    const end = () => {
      if (!this.open.delete(end)) return;
      unlisten();
      clearInterval(heartbeat);
      sink.end();
    };
    this.open.add(end);
    if (!access) end();
    while (replaying && this.open.has(end)) {
      const missed = await feed.replay(sent, REPLAY_BATCH);
      for (const change of missed) send(change);
      await queue;
      if (missed.length < REPLAY_BATCH) replaying = false;
    }
    for (const change of held.splice(0)) send(change);
    await queue;
    return end;
  }

  /** Ends every stream (the instance closes: the clients reconnect elsewhere, with Last-Event-ID). */
  closeAll(): void {
    for (const end of [...this.open]) end();
  }
}
