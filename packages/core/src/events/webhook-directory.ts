import type { SchemaModel } from '../definition/model';
import type { CacheEvent } from '../sql/cache-events';
import type { ChangeKind, ChangeRouting, WebhookTargets } from '../sql/change-routing';
import type { Connection, Database } from '../sql/database';
import { activeWebhooks, type ActiveWebhook } from '../sql/delivery-store';
import { sqlContext } from '../sql/sql-context';
import { afterCommit } from '../sql/transaction';

/** The entity type whose changes change the list. */
const WEBHOOK = 'Webhook';

const wants = (webhook: ActiveWebhook, change: ChangeKind) =>
  (!webhook.entityTypes || webhook.entityTypes.has(change.entityType)) && (!webhook.actions || webhook.actions.has(change.action));

/**
 * The active webhooks as this process knows them, and the routing of changes to them
 * (`ChangeRouting`). The list is read once and kept: a write no webhook wants costs nothing. A
 * change of a Webhook (by any route: it is logged like every change) drops it here at once and,
 * once committed, in every process of the database (cache event `webhook`); a lost listening
 * connection drops it too. Tells `onDeliveries` when a committed write made deliveries.
 */
export class WebhookDirectory implements ChangeRouting {
  private list?: readonly ActiveWebhook[];
  /** Grows with every drop: a list read before one is not kept. */
  private version = 0;
  /** Transactions that changed webhooks: what they read is not yet (and may never be) committed. */
  private readonly changing = new WeakSet<object>();

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
        this.forget();
        this.parts.announce({ kind: 'webhook', id: '*' }).catch(() => undefined);
      });
    }
    if (deliveries > 0) afterCommit(db, this.parts.onDeliveries);
  }

  /** Drops the list: the next write reads it again. */
  forget(): void {
    this.version += 1;
    this.list = undefined;
  }
}
