import type { SchemaModel } from '../definition/model';
import type { CacheEvent } from '../sql/cache-events';
import type { ChangeKind, ChangeRouting, WebhookTargets } from '../sql/change-routing';
import { insertMissedDeliveries, webhooksChangedSince } from '../sql/change-store';
import type { Connection, Database } from '../sql/database';
import { activeWebhooks, type ActiveWebhook } from '../sql/delivery-store';
import { sqlContext } from '../sql/sql-context';
import { afterCommit } from '../sql/transaction';
import { formatDateTime } from '../time';

/** The entity type whose changes change the list. */
const WEBHOOK = 'Webhook';
/** When the changes a process routed without a changed webhook are looked for again: writes still running when it heard finish meanwhile. */
const AGAIN_AFTER_MS = [1_000, 10_000];
/** The webhooks changed this long ago or less are the ones looked at. */
const CHANGED_WITHIN_MS = 60_000;

const wants = (webhook: ActiveWebhook, change: ChangeKind) =>
  (!webhook.entityTypes || webhook.entityTypes.has(change.entityType)) && (!webhook.actions || webhook.actions.has(change.action));

/**
 * The active webhooks as this process knows them, and the routing of changes to them
 * (`ChangeRouting`). The list is read once and kept: a write no webhook wants costs nothing. A
 * change of a Webhook (by any route: it is logged like every change) drops it here at once and,
 * once committed, in every process of the database (cache event `webhook`); a lost listening
 * connection drops it too. Tells `onDeliveries` when a committed write made deliveries.
 *
 * A write chooses its webhooks before it logs its change: one that chose while another process
 * created or activated a webhook, before this process heard of it, logs a change after the
 * webhook's own without its delivery. So each process, when it hears of a webhook change (and 1 s
 * and 10 s later, for the writes then still running), writes the deliveries that webhooks changed
 * within the last minute lack for the changes logged after their own (`catchUp`); the unique
 * index of webhook and seq keeps every delivery single. Writes pay nothing for it.
 */
export class WebhookDirectory implements ChangeRouting {
  private list?: readonly ActiveWebhook[];
  /** Grows with every drop: a list read before one is not kept. */
  private version = 0;
  /** Transactions that changed webhooks: what they read is not yet (and may never be) committed. */
  private readonly changing = new WeakSet<object>();
  /** The look for missed changes under way (one at a time), and the later ones planned. */
  private catching: Promise<void> = Promise.resolve();
  private readonly later = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly parts: {
      database: Database;
      schema: SchemaModel;
      /** Tells the other processes that the webhooks changed. */
      announce: (event: CacheEvent) => Promise<unknown>;
      /** A committed write of this process made deliveries. */
      onDeliveries: () => void;
    },
  ) {}

  /** The active webhooks, read through `db` when unknown (a write's transaction sees its own). */
  async active(db: Connection = this.parts.database.knex): Promise<readonly ActiveWebhook[]> {
    if (this.list) return this.list;
    const version = this.version;
    const list = await activeWebhooks(sqlContext(this.parts, db));
    if (version === this.version && !this.changing.has(db)) this.list = list;
    return list;
  }

  /** Whether some webhook is active, as far as this process knows without asking the database. */
  get anyActive(): boolean {
    return this.list === undefined || this.list.length > 0;
  }

  async targets(db: Connection, changes: readonly ChangeKind[]): Promise<WebhookTargets | undefined> {
    const list = await this.active(db);
    if (list.length === 0 || !changes.some((change) => list.some((webhook) => wants(webhook, change)))) return undefined;
    return (change) => list.filter((webhook) => wants(webhook, change)).map((webhook) => webhook.id);
  }

  written(db: Connection, { changes, deliveries }: { changes: readonly ChangeKind[]; deliveries: number }): void {
    if (changes.some((change) => change.entityType === WEBHOOK)) {
      // Dropped now (the rest of this transaction reads it through itself) and again once the
      // write commits, here and in the other processes.
      this.forget();
      this.changing.add(db);
      afterCommit(db, () => {
        this.parts.announce({ kind: 'webhook', id: '*' }).catch(() => undefined);
        this.heard();
      });
    }
    if (deliveries > 0) afterCommit(db, this.parts.onDeliveries);
  }

  /** Drops the list: the next write reads it again. */
  forget(): void {
    this.version += 1;
    this.list = undefined;
  }

  /** A webhook changed (or news of changes may have been missed): drops the list and writes the deliveries writes routed without the change, now and later. */
  heard(): void {
    this.forget();
    // Only where writers run side by side (PostgreSQL) can a write choose its webhooks while a
    // webhook change is under way. SQLite runs one write transaction at a time, and the change of
    // a webhook drops this list within its own transaction (`written`): the next write reads it
    // again. (Processes sharing a SQLite file hear nothing of each other's webhook changes: see
    // the guide.) On SQLite the look would also hold the event loop while it reads the log.
    if (this.stopped || !this.parts.database.dialect.locksRows) return;
    this.catchUpSoon();
    for (const ms of AGAIN_AFTER_MS) {
      const timer = setTimeout(() => {
        this.later.delete(timer);
        this.catchUpSoon();
      }, ms);
      timer.unref();
      this.later.add(timer);
    }
  }

  /** Plans nothing more and waits for the look under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.later) clearTimeout(timer);
    this.later.clear();
    await this.catching;
  }

  private catchUpSoon(): void {
    // A failed look (the database away) is made again by the next one; the worker's poll does not depend on it.
    this.catching = this.catching.then(() => this.catchUp()).catch(() => undefined);
  }

  /** Writes, for each active webhook changed within the last minute, the deliveries it lacks of the changes logged after its own. */
  private async catchUp(): Promise<void> {
    const sql = sqlContext(this.parts, this.parts.database.knex);
    const changed = await webhooksChangedSince(sql, formatDateTime(new Date(Date.now() - CHANGED_WITHIN_MS)));
    if (changed.size === 0) return;
    let offered = 0;
    for (const webhook of await this.active()) {
      const after = changed.get(webhook.id);
      if (after !== undefined) offered += await insertMissedDeliveries(sql, { webhook, after });
    }
    if (offered > 0) this.parts.onDeliveries();
  }
}
