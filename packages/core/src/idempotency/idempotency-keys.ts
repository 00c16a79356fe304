import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors';
import type { InstanceLogger } from '../logger';
import type { IdempotencyId, IdempotencyStore, Reservation } from '../sql/idempotency-store';

/**
 * Idempotency keys (CONTRACT §16), independent of HTTP: `claim` reserves a user's key for one
 * request, or answers the kept answer of the request that took it; the request holding the key
 * hands its answer to `finish`. Exports the service and the kept answer's shape.
 *
 * - Reservation is one insert on the primary key (user, key): of two requests with one key,
 *   one runs and the other is refused (409) or, once the answer is kept, replays it. This holds
 *   across the processes of one database.
 * - A running request renews its lease; a reservation whose lease ran out (its process died) is
 *   taken over by the next request with the key, which then runs.
 * - Kept: answers below 500 other than 408 and 429 (2xx, and refusals that wrote nothing). A 5xx,
 *   408 or 429 frees the key, so that a retry can succeed.
 * - After `keepMs` a key is free again; rows that old are purged every hour by every process.
 */

/** An answer as kept and replayed: status, the headers a client needs, the body text. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A key this request holds: it runs, then hands its answer over (kept, or the key freed). */
export interface HeldKey {
  finish(answer: KeptAnswer): Promise<void>;
}

/** What a claim gives: the key to run with, or the answer to replay. */
export type Claim = { held: HeldKey } | { replay: KeptAnswer };

export interface IdempotencyOptions {
  /** How long an answer is kept; default 24 h. */
  keepMs: number;
  /** How long a reservation stays valid without renewal; default 60 s (renewed every third of it). */
  leaseMs: number;
  logger: InstanceLogger;
}

export const DEFAULT_KEEP_HOURS = 24;
export const DEFAULT_LEASE_SECONDS = 60;
const SWEEP_MS = 60 * 60 * 1000;
/** Claims that lose this many races in a row (the row changing under them) answer 409. */
const ATTEMPTS = 3;

/** Whether an answer with this status is kept and replayed (else the key is freed). */
export const keepsAnswer = (status: number): boolean => status < 500 && status !== 408 && status !== 429;

const inProgress = (key: string) =>
  new ApiError('CORE_IDEMPOTENCY_IN_PROGRESS', `A request with Idempotency-Key '${key}' is still running; repeat it once it has been answered`, {
    details: { key },
    headers: { 'Retry-After': '1' },
  });

const mismatch = (key: string, hours: number) =>
  new ApiError('CORE_IDEMPOTENCY_MISMATCH', `Idempotency-Key '${key}' was used for another request (method, path or body) within the last ${hours} hours; send a new key with a new request`, {
    details: { key },
  });

export class IdempotencyKeys {
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly options: IdempotencyOptions,
  ) {}

  /**
   * Reserves `key` of `userId` for the request `fingerprint` names, or gives the kept answer of
   * the same request; 422 for another request with the key, 409 while the first one runs.
   */
  async claim({ userId, key, fingerprint }: IdempotencyId & { fingerprint: string }): Promise<Claim> {
    const id = { userId, key };
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const now = Date.now();
      const reservation: Reservation = { fingerprint, owner: randomUUID(), createdAt: now, leaseUntil: now + this.options.leaseMs };
      if (await this.store.reserve(id, reservation)) return { held: this.hold(id, reservation) };
      const row = await this.store.read(id);
      // Freed between the insert and the read: try again.
      if (!row) continue;
      const abandoned = row.answer === undefined && row.leaseUntil < now;
      const expired = row.createdAt <= now - this.options.keepMs && (row.answer !== undefined || abandoned);
      if (!expired && row.fingerprint !== fingerprint) throw mismatch(key, this.hours);
      if (!expired && row.answer) return { replay: row.answer };
      if (!expired && !abandoned) throw inProgress(key);
      if (await this.store.takeOver(id, { seenOwner: row.owner, reservation })) {
        if (abandoned) this.options.logger.warn({ userId, key }, 'took over an idempotency key whose request stopped renewing it');
        return { held: this.hold(id, reservation) };
      }
    }
    throw inProgress(key);
  }

  /** Purges kept answers past their time now, then every hour until `close`. */
  start(): void {
    void this.sweep();
    this.sweeper ??= setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private get hours(): number {
    return Math.round((this.options.keepMs / 3_600_000) * 100) / 100;
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    try {
      const purged = await this.store.purge({ before: now - this.options.keepMs, now });
      if (purged > 0) this.options.logger.info({ purged }, `removed ${purged} idempotency keys past their time`);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'the idempotency key sweep failed; it runs again within the hour');
    }
  }

  /** The key held by one request: its lease renewed until it hands its answer over. */
  private hold(id: IdempotencyId, { owner }: Reservation): HeldKey {
    const { leaseMs, logger } = this.options;
    const renewal = setInterval(() => {
      this.store.renew(id, { owner, leaseUntil: Date.now() + leaseMs }).catch((error) => logger.warn({ err: error, key: id.key }, 'could not renew an idempotency key'));
    }, Math.max(1, Math.floor(leaseMs / 3)));
    renewal.unref();
    let finished = false;
    return {
      finish: async (answer) => {
        if (finished) return;
        finished = true;
        clearInterval(renewal);
        try {
          if (keepsAnswer(answer.status)) await this.store.finish(id, { owner, answer });
          else await this.store.release(id, owner);
        } catch (error) {
          // The answer still goes out; the key stays reserved until its lease ends.
          logger.warn({ err: error, key: id.key, status: answer.status }, 'could not keep the answer of an idempotency key');
        }
      },
    };
  }
}

