import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import os from 'node:os';
import { ApiError } from '../errors';
import { ConcurrencyLimit } from '../util/concurrency-limit';

/** OWASP's scrypt parameters: N=2^17, r=8, p=1 (128 MiB, a fraction of a second per hash). */
const PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

/** Hashes that may wait for a CPU by default; see `AuthOptions.passwordHashQueue`. */
export const DEFAULT_PASSWORD_HASH_QUEUE = 64;

/**
 * Every hash of the process (sign-ins, password changes, sharing passwords) runs through one
 * limit: as many at a time as there are CPUs. Each takes 128 MiB and a CPU for a fraction of a
 * second; unbounded, a burst of sign-ins grew the process by hundreds of MiB and starved every
 * other request. Past the queue, 503 `CORE_BUSY` (with `Retry-After`).
 */
const hashing = new ConcurrencyLimit({
  concurrency: os.availableParallelism(),
  queue: DEFAULT_PASSWORD_HASH_QUEUE,
  busy: () => new ApiError('CORE_BUSY', 'Too many sign-ins at once; try again shortly'),
});

/** Sets how many password hashes may wait for a CPU (process-wide, shared by every instance). */
export function setPasswordHashQueue(queue: number): void {
  hashing.configure({ queue });
}

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r };
  return hashing.run(
    () =>
      new Promise((resolve, reject) =>
        scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  );
}

/**
 * `scrypt$N$r$p$salt$hash`, base64 parts. `cost` is log2(N): 17 by default (OWASP); test suites may
 * lower it to save time (never below 14). Verification reads N from the stored hash.
 */
export async function hashPassword(password: string, cost = 17): Promise<string> {
  const params = { ...PARAMS, N: 2 ** Math.max(14, Math.min(20, Math.floor(cost))) };
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/**
 * A stored hash compared in constant time. A missing hash still costs one derivation at the
 * instance's cost, so that unknown user names take as long as known ones.
 */
export async function verifyPassword(password: string, stored: string | null | undefined, cost = 17): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    await derive(password, randomBytes(16), { ...PARAMS, N: 2 ** Math.max(14, Math.min(20, Math.floor(cost))) });
    return false;
  }
  const [, n, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
