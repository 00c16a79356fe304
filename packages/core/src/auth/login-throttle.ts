import { createHash } from 'node:crypto';
import { ApiError } from '../errors';
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
  ) {
    this.perUser = options.maxFailuresPerUser ?? 10;
    this.perAddress = options.maxFailuresPerAddress ?? 100;
    this.windowMs = (options.windowSeconds ?? 60) * 1000;
  }

  private keys(userName: string, address: string): [string, string] {
    const name = userName.toLowerCase();
    // A name that does not fit the key column (or holds a NUL) is throttled by its hash.
    const user = name.length <= 200 && !name.includes('\u0000') ? `user:${name}` : `user#${createHash('sha256').update(name).digest('hex')}`;
    return [user, `ip:${address}`];
  }

  /**
   * Runs a sign-in attempt unless blocked; records its failure (401) when it fails. The attempt
   * counts as a failure before the password is checked, and is taken back when it does not fail:
   * attempts sent at once are counted together, so that no more than the limit of them are tried
   * before the others are refused.
   */
  async attempt<TResult>(userName: string, address: string, fn: () => Promise<TResult>): Promise<TResult> {
    const keys = this.keys(userName, address);
    const now = Date.now();
    const until = await this.store.blockedUntil(keys, now);
    if (until !== undefined) throw tooMany(until - now);
    const pending = keys.map((key, i) => ({ key, id: uuidv7(), limit: i === 0 ? this.perUser : this.perAddress, count: 0 }));
    for (const p of pending) p.count = await this.store.addFailure(p.key, { id: p.id, now, since: now - this.windowMs });
    const takeBack = () => this.store.removeFailures(pending.map((p) => p.id));
    const over = pending.filter((p) => p.count > p.limit);
    if (over.length) {
      await takeBack();
      for (const p of over) await this.store.block(p.key, now + this.windowMs);
      throw tooMany(this.windowMs);
    }
    try {
      const result = await fn();
      await takeBack();
      return result;
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 'CORE_UNAUTHORIZED')) await takeBack();
      else for (const p of pending) if (p.count >= p.limit) await this.store.block(p.key, now + this.windowMs);
      throw error;
    }
  }
}

/** 429 for a sign-in refused for `ms` more milliseconds. */
function tooMany(ms: number): ApiError {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return new ApiError('CORE_TOO_MANY_REQUESTS', `Too many failed sign-ins; try again in ${seconds} s`, { headers: { 'Retry-After': String(seconds) } });
}
