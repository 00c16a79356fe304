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

  /** Runs a sign-in attempt unless blocked; records its failure (401) when it fails. */
  async attempt<TResult>(userName: string, address: string, fn: () => Promise<TResult>): Promise<TResult> {
    const keys = this.keys(userName, address);
    const now = Date.now();
    const until = await this.store.blockedUntil(keys, now);
    if (until !== undefined) {
      const seconds = Math.max(1, Math.ceil((until - now) / 1000));
      throw new ApiError('CORE_TOO_MANY_REQUESTS', `Too many failed sign-ins; try again in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
      });
    }
    try {
      return await fn();
    } catch (error) {
      if (error instanceof ApiError && error.code === 'CORE_UNAUTHORIZED') await this.fail(keys);
      throw error;
    }
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
