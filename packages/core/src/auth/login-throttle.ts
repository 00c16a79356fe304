import { createHash } from 'node:crypto';
import { ApiError } from '../errors';
import { DEFAULT_PASSWORD_HASH_QUEUE } from './password';
import type { ThrottleStore } from '../sql/throttle-store';
import { uuidv7 } from '../util/uuid';

export interface ThrottleOptions {
  /** Failures per user name within the window that block it; default 10. */
  maxFailuresPerUser?: number;
  /** Failures per address within the window that block it; default 100. */
  maxFailuresPerAddress?: number;
  /** Window and block length in seconds; default 60. */
  windowSeconds?: number;
}

/**
 * Login throttling kept in the database, so several processes agree: once a user name (or an
 * address) has too many failures within the window, it is refused with 429, even with the right
 * password, until a window's length after its last failure. Refused attempts do not count.
 */
export class LoginThrottle {
  private readonly perUser: number;
  private readonly perAddress: number;
  private readonly windowMs: number;

  constructor(
    private readonly store: ThrottleStore,
    options: ThrottleOptions = {},
    /** Attempts that may wait for a place at once (as the password hashes that may wait); past them 503. */
    private readonly maxWaiting = DEFAULT_PASSWORD_HASH_QUEUE,
  ) {
    this.perUser = options.maxFailuresPerUser ?? 10;
    this.perAddress = options.maxFailuresPerAddress ?? 100;
    this.windowMs = (options.windowSeconds ?? 60) * 1000;
  }

  private keys(userName: string, address: string): [string, string] {
    // Compared as sign-in compares it: exactly (`VICTIM` is another user name than `victim`).
    const name = userName;
    // A name that does not fit the key column (or holds a NUL) is throttled by its hash.
    const user = name.length <= 200 && !name.includes('\u0000') ? `user:${name}` : `user#${createHash('sha256').update(name).digest('hex')}`;
    return [user, `ip:${address}`];
  }

  /** Attempts under way in this process, by throttle key, and what waits for one of them to end. */
  private readonly running = new Map<string, { count: number; ended: (() => void)[] }>();
  /** Attempts of this process waiting for a place. */
  private waiting = 0;
  /** The admission of the attempt before: admissions run one at a time. */
  private admissions: Promise<void> = Promise.resolve();

  /**
   * Runs a sign-in attempt unless blocked; records its failure (401) when it fails. Attempts under
   * way count against the limit too: while the failures of a key and its attempts under way reach
   * the limit, a further attempt waits for one of them to end, and is refused once they have
   * failed. So attempts sent at once are never more than the limit of guesses, and right
   * passwords sent at once all get through.
   */
  async attempt<TResult>(userName: string, address: string, fn: () => Promise<TResult>): Promise<TResult> {
    const keys = this.keys(userName, address);
    let waited = false;
    try {
      for (;;) {
        const full = await this.admit(keys);
        if (full === undefined) break;
        if (!waited) {
          // The waiting room is bounded as the hash queue is: past it, 503 (with Retry-After).
          if (this.waiting >= this.maxWaiting) throw new ApiError('CORE_BUSY', 'Too many sign-ins at once; try again shortly');
          this.waiting += 1;
          waited = true;
        }
        // Woken when an attempt on the key ends; checked again at the latest after a short while.
        await Promise.race([new Promise<void>((resolve) => this.slot(full).ended.push(resolve)), new Promise((resolve) => setTimeout(resolve, RECHECK_MS))]);
        if (this.running.get(full)?.count === 0) this.running.delete(full);
      }
    } finally {
      if (waited) this.waiting -= 1;
    }
    try {
      return await fn();
    } catch (error) {
      if (error instanceof ApiError && error.code === 'CORE_UNAUTHORIZED') await this.fail(keys);
      throw error;
    } finally {
      for (const key of keys) this.release(key);
    }
  }

  /**
   * Admits an attempt (counted as under way) unless blocked (429); answers the key it must wait
   * for instead, if any. One admission at a time, so that two cannot both take the last place.
   */
  private admit(keys: [string, string]): Promise<string | undefined> {
    const admitted = this.admissions.then(async () => {
      const now = Date.now();
      const until = await this.store.blockedUntil(keys, now);
      if (until !== undefined) throw tooMany(until - now);
      const full = await this.firstFull(keys, [this.perUser, this.perAddress], now - this.windowMs);
      if (full === undefined) for (const key of keys) this.slot(key).count += 1;
      return full;
    });
    this.admissions = admitted.then(
      () => undefined,
      () => undefined,
    );
    return admitted;
  }

  /** The first key whose failures and attempts under way reach its limit, if any. */
  private async firstFull(keys: readonly string[], limits: readonly number[], since: number): Promise<string | undefined> {
    for (const [i, key] of keys.entries()) {
      const running = this.running.get(key)?.count ?? 0;
      if (running > 0 && running + (await this.store.failures(key, since)) >= limits[i]) return key;
    }
    return undefined;
  }

  private slot(key: string): { count: number; ended: (() => void)[] } {
    let slot = this.running.get(key);
    if (!slot) this.running.set(key, (slot = { count: 0, ended: [] }));
    return slot;
  }

  private release(key: string): void {
    const slot = this.slot(key);
    slot.count -= 1;
    const waiting = slot.ended.splice(0);
    if (slot.count === 0 && waiting.length === 0) this.running.delete(key);
    for (const wake of waiting) wake();
  }

  private async fail([userKey, addressKey]: [string, string]): Promise<void> {
    const now = Date.now();
    const since = now - this.windowMs;
    for (const [key, limit] of [[userKey, this.perUser], [addressKey, this.perAddress]] as const) {
      const count = await this.store.addFailure(key, { id: uuidv7(), now, since });
      if (count >= limit) await this.store.block(key, now + this.windowMs);
    }
  }
}

/** How long an attempt waiting for a place looks again at the latest (in case no attempt ending woke it). */
const RECHECK_MS = 50;

/** 429 for a sign-in refused for `ms` more milliseconds. */
function tooMany(ms: number): ApiError {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return new ApiError('CORE_TOO_MANY_REQUESTS', `Too many failed sign-ins; try again in ${seconds} s`, { headers: { 'Retry-After': String(seconds) } });
}
