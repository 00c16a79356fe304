import type { InstanceLogger } from '../logger';
import { changesBySeq, type StoredChange } from '../sql/change-store';
import {
  claimDeliveries,
  finishAttempt,
  nextDue,
  releaseDelivery,
  webhookTargets,
  type AttemptOutcome,
  type ClaimedDelivery,
  type WebhookTarget,
} from '../sql/delivery-store';
import type { SqlContext } from '../sql/sql-context';
import { eventLoopTurns } from '../util/event-loop';
import { uuidv7 } from '../util/uuid';
import { sendOnce, type SendOptions } from './webhook-sender';

/** How deliveries are attempted (option `webhooks` with its defaults filled in). */
export interface DispatchOptions extends Omit<SendOptions, 'signal'> {
  /** Attempts before a delivery is `Failed`. */
  maxAttempts: number;
  /** The wait after the first failed attempt, in ms; it doubles after each one. */
  retryBaseMs: number;
  /** How long a worker holds a delivery it attempts; one whose process died is taken again after it. */
  leaseMs: number;
  /** How often a worker looks for due deliveries while webhooks are active (other processes' deliveries, lapsed leases). */
  pollMs: number;
  /** Deliveries attempted at once by one process. */
  concurrency: number;
}

/** The body of a delivery: which delivery, which webhook, the change. */
export function deliveryBody(delivery: { id: string; webhookId: string }, change: StoredChange): string {
  const { seq, entityType, recordId, action, diff, userId, createdAt } = change;
  return JSON.stringify({ deliveryId: delivery.id, webhookId: delivery.webhookId, event: { seq, entityType, recordId, action, diff, userId, createdAt } });
}

/**
 * The worker of one process: takes due deliveries from the delivery table (shared by every
 * process; each row is held by one worker at a time under a lease), attempts them, and records
 * the outcome: delivered, due again after an exponential back-off, or `Failed` after the last
 * attempt. It looks when told (a write of this process made deliveries, a commit of another
 * process, a redelivery), when the next one is due, and every `pollMs` while webhooks are active.
 */
export class WebhookDispatcher {
  private round?: Promise<void>;
  private again = false;
  private timer?: NodeJS.Timeout;
  private poller?: NodeJS.Timeout;
  private stopped = true;
  private readonly aborts = new AbortController();
  /** This process's mark on the rows it holds. */
  private readonly lease = uuidv7();

  constructor(
    private readonly sql: () => SqlContext,
    private readonly options: DispatchOptions,
    private readonly parts: { logger: Pick<InstanceLogger, 'info' | 'warn'>; anyActive: () => boolean },
  ) {}

  start(): void {
    this.stopped = false;
    this.poller = setInterval(() => this.parts.anyActive() && this.wake(), this.options.pollMs);
    this.poller.unref();
    this.wake();
  }

  /** Looks for due deliveries now (once more after the current look, if one runs). */
  wake(): void {
    if (this.stopped) return;
    if (this.round) {
      this.again = true;
      return;
    }
    this.round = this.work()
      .catch((error) => this.parts.logger.warn({ err: error }, 'webhook deliveries could not be read; the worker looks again shortly'))
      .finally(() => {
        this.round = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops looking; attempts in flight are cut short and handed back, due again at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.poller);
    clearTimeout(this.timer);
    this.aborts.abort();
    await this.round;
  }

  private async work(): Promise<void> {
    const { leaseMs, concurrency } = this.options;
    // Attempts that fail before any I/O (an address the guard refuses) never return to the event
    // loop by themselves; on SQLite a long backlog would hold every request until it is worked off.
    const turn = eventLoopTurns();
    while (!this.stopped) {
      const claimed = await claimDeliveries(this.sql(), { lease: this.lease, leaseMs, limit: concurrency });
      if (claimed.length === 0) break;
      await this.attemptAll(claimed);
      await turn();
    }
    if (!this.stopped) this.schedule(await nextDue(this.sql()));
  }

  /** Wakes at `due` (not sooner than in 10 ms: a time in the past is a lapsed lease met a moment early). */
  private schedule(due: number | undefined): void {
    clearTimeout(this.timer);
    if (due === undefined || this.stopped) return;
    this.timer = setTimeout(() => this.wake(), Math.min(Math.max(due - Date.now(), 10), 2 ** 31 - 1));
    this.timer.unref();
  }

  private async attemptAll(claimed: readonly ClaimedDelivery[]): Promise<void> {
    const sql = this.sql();
    const [webhooks, changes] = await Promise.all([webhookTargets(sql, claimed.map((d) => d.webhookId)), changesBySeq(sql, claimed.map((d) => d.seq))]);
    await Promise.all(claimed.map((delivery) => this.attempt(delivery, { webhook: webhooks.get(delivery.webhookId), change: changes.get(delivery.seq) })));
  }

  private async attempt(delivery: ClaimedDelivery, { webhook, change }: { webhook?: WebhookTarget; change?: StoredChange }): Promise<void> {
    const sql = this.sql();
    const outcome = await this.outcome(delivery, { webhook, change });
    if (!outcome) return releaseDelivery(sql, { id: delivery.id, lease: this.lease });
    await finishAttempt(sql, { id: delivery.id, lease: this.lease, outcome });
    if (!outcome.delivered && outcome.retryAt === undefined) {
      this.parts.logger.warn({ deliveryId: delivery.id, webhookId: delivery.webhookId, attempts: delivery.attempts, error: outcome.error }, `webhook delivery ${delivery.id} failed`);
    }
  }

  /** How the attempt ends; undefined when the process stopped during it (handed back). */
  private async outcome(delivery: ClaimedDelivery, { webhook, change }: { webhook?: WebhookTarget; change?: StoredChange }): Promise<AttemptOutcome | undefined> {
    if (!webhook || !webhook.isActive) return { delivered: false, statusCode: null, error: webhook ? 'The webhook is inactive' : 'The webhook was removed', countAttempt: false };
    if (!change) return { delivered: false, statusCode: null, error: 'The change is no longer in the change log (retention)', countAttempt: false };
    const body = deliveryBody(delivery, change);
    const result = await sendOnce({ url: webhook.url, secret: webhook.secret, webhookId: webhook.id, deliveryId: delivery.id, body }, { ...this.options, signal: this.aborts.signal });
    if (this.stopped && !result.ok) return undefined;
    if (result.ok) return { delivered: true, statusCode: result.statusCode };
    const { maxAttempts, retryBaseMs } = this.options;
    if (delivery.attempts >= maxAttempts) return { delivered: false, statusCode: result.statusCode, error: result.error };
    const retryAt = Date.now() + retryBaseMs * 2 ** (delivery.attempts - 1);
    this.schedule(retryAt);
    return { delivered: false, statusCode: result.statusCode, error: result.error, retryAt };
  }
}
