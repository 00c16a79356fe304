import { createHash, hash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ContextUser } from '../context';
import { ApiError } from '../errors';
import type { AuthStore, StoredUser } from '../sql/auth-store';
import type { CacheEvent } from '../sql/cache-events';
import { uuidv7 } from '../util/uuid';
import type { ThrottleOptions } from './login-throttle';
import { verifyPassword } from './password';

export interface AuthOptions {
  /** Hours a token lives; 0 = no limit. Default 0. */
  tokenLifetimeHours?: number;
  /** Hours of inactivity after which a token is refused; 0 = no limit. Default 0. */
  tokenIdleHours?: number;
  /**
   * Seconds a checked token is trusted without asking the database again. Revocation through this
   * process takes effect at once; through another process at once on PostgreSQL (NOTIFY), within
   * this many seconds on SQLite. Default 5 on PostgreSQL, 0.5 on SQLite.
   */
  tokenCacheSeconds?: number;
  /** log2 of scrypt's N for new password hashes; default 17 (OWASP). Lower only in tests (min 14). */
  passwordCost?: number;
  /** Login throttling limits. */
  throttle?: ThrottleOptions;
  /**
   * Trusts the host's own sign-in (its session, its JWT): called for a request without
   * `Authorization-Token`, it answers the `userName` of an existing, active User the request acts
   * for, or undefined to fall back to the session cookie (and then 401). The host checks its
   * own credentials and guards its cookies against cross-site requests.
   */
  resolveUser?: (req: IncomingMessage) => string | undefined | null | Promise<string | undefined | null>;
  /**
   * Password hashes (sign-ins, password changes) run as many at a time as there are CPUs; this
   * many more may wait, and any more are refused with 503 `CORE_BUSY`. Default 64. The limit is
   * the process's: the last instance created with this option sets it.
   */
  passwordHashQueue?: number;
}

export interface TokenTimes {
  lifetimeHours?: number;
  idleHours?: number;
}

/** Who a token acts for, and in a delegated session, who acts. */
export interface Session {
  user: ContextUser;
  actor?: ContextUser;
}

interface CachedToken extends Session {
  tokenId: string;
  expiresAt: number | null;
  idleMs: number | null;
  /** The last request with the token this process knows of (or the stored time, if later). */
  lastUsedAt: number;
  /** The time last written to the token's row (what other processes judge the idle time by). */
  storedAt: number;
  checkedAt: number;
}

/**
 * last_used_at is written at most this often per token, so a request does not cost a write; for
 * an idle time shorter than ten times this, every tenth of the idle time, so that a token in use
 * never looks idle to another process.
 */
const TOUCH_INTERVAL_MS = 60_000;
const touchInterval = (idleMs: number | null) => (idleMs === null ? TOUCH_INTERVAL_MS : Math.min(TOUCH_INTERVAL_MS, idleMs / 10));

/** The SHA-256 of a token, as stored (once per request: the one-shot `hash` costs less than half of what a `Hash` object does). */
export const hashToken = (token: string): string => hash('sha256', token, 'hex');

export const unauthorized = (message = 'Authentication required'): ApiError => new ApiError('CORE_UNAUTHORIZED', message);

/**
 * What a user's credentials are, as a digest of the password hash (and, for a delegated session,
 * the acting admin's): stored with a token, and compared whenever the token is loaded. A password
 * change revokes the user's tokens once it is stored; a sign-in that checked the old password while
 * the change was being written, and stored its token after that revocation, would otherwise keep
 * it for good.
 */
const credentialStamp = (userHash: string | null, actorHash?: string | null): string =>
  createHash('sha256').update(`${userHash ?? ''}\n${actorHash ?? ''}`).digest('hex').slice(0, 32);

const toContextUser = (u: StoredUser): ContextUser => ({
  id: u.id,
  userName: u.userName,
  name: u.name,
  isAdmin: u.isAdmin,
  rolesIds: u.rolesIds,
});

/** Sign-in with a password, opaque tokens (256 random bits; only their hash is stored), revocation. */
export class AuthService {
  private readonly cache = new Map<string, CachedToken>();
  private readonly cacheMs: number;
  /** The password hash each user this service answered was checked or read with (see `credentialStamp`). */
  private readonly hashes = new WeakMap<ContextUser, string | null>();

  constructor(
    private readonly store: AuthStore,
    /** `tokenCacheSeconds` as the instance settled it (its default depends on the database). */
    private readonly options: AuthOptions & { tokenCacheSeconds: number },
    /** Tells the other processes of the database to drop what they cached (see CacheEvents). */
    private readonly announce: (event: CacheEvent) => Promise<void> = async () => undefined,
  ) {
    this.cacheMs = options.tokenCacheSeconds * 1000;
  }

  /** Checks a user name and password; 401 for a wrong pair or an inactive user. */
  async verifyCredentials(userName: string, password: string): Promise<ContextUser> {
    // No user name holds a NUL (PostgreSQL would refuse to compare it): no such user.
    const user = userName.includes('\u0000') ? undefined : await this.store.userByName(userName);
    const ok = await verifyPassword(password, user?.passwordHash, this.options.passwordCost);
    if (!user || !ok || !user.isActive) throw unauthorized('Wrong user name or password');
    // The hash the password was checked against, not a later read's: a token issued from it must
    // not outlive a password change that commits in between.
    return this.known(toContextUser((await this.store.userById(user.id)) ?? user), user.passwordHash);
  }

  private known(user: ContextUser, passwordHash: string | null): ContextUser {
    this.hashes.set(user, passwordHash);
    return user;
  }

  /** The password hash a user was answered with, else the one stored now (a user the host made). */
  private async hashOf(user: ContextUser): Promise<string | null> {
    if (this.hashes.has(user)) return this.hashes.get(user) ?? null;
    return (await this.store.userById(user.id))?.passwordHash ?? null;
  }

  /** The session of an active user by name, for identities the host vouches for (`resolveUser`); 401 otherwise. */
  async sessionOf(userName: string): Promise<Session> {
    const found = userName.includes('\u0000') ? undefined : await this.store.userByName(userName);
    const user = found && found.isActive ? await this.store.userById(found.id) : undefined;
    if (!user) throw unauthorized(`The host's user '${userName}' is no active user of the API`);
    return { user: this.known(toContextUser(user), user.passwordHash) };
  }

  /**
   * A session acting for another user, opened by an admin: requests run with the user's rights,
   * and records remember the admin as actor.
   */
  async delegate(actor: ContextUser, userName: string): Promise<Session> {
    if (!actor.isAdmin) throw new ApiError('CORE_FORBIDDEN', 'Only admins may act for another user');
    const found = await this.store.userByName(userName);
    const user = found && found.isActive ? await this.store.userById(found.id) : undefined;
    if (!user) throw new ApiError('CORE_NOT_FOUND', `User '${userName}' not found`, { details: { entity: 'User', userName } });
    return { user: this.known(toContextUser(user), user.passwordHash), actor };
  }

  /** Issues a new token for a user (acting through `actor` in a delegated session). */
  async issueToken(user: ContextUser, times: TokenTimes = {}, actor?: ContextUser): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = Date.now();
    const lifetime = times.lifetimeHours ?? this.options.tokenLifetimeHours ?? 0;
    const idle = times.idleHours ?? this.options.tokenIdleHours ?? 0;
    await this.store.insertToken({
      id: uuidv7(),
      hash: hashToken(token),
      userId: user.id,
      createdAt: now,
      lastUsedAt: now,
      // Whole milliseconds (stored as integers), at least one: a fraction of an hour is a limit, not none.
      expiresAt: lifetime > 0 ? now + Math.ceil(lifetime * 3_600_000) : null,
      idleMs: idle > 0 ? Math.ceil(idle * 3_600_000) : null,
      actorId: actor?.id ?? null,
      credentialStamp: credentialStamp(await this.hashOf(user), actor && (await this.hashOf(actor))),
    });
    return token;
  }

  /** The session of a token; 401 when it is unknown, expired, idle too long or revoked. */
  async authenticate(token: string): Promise<Session> {
    const hash = hashToken(token);
    const now = Date.now();
    const cached = this.cache.get(hash);
    const idle = (e: CachedToken) => e.idleMs !== null && now - e.lastUsedAt >= e.idleMs;
    // A token that looks idle to this process may have been used through another one since: its
    // stored time of last use decides before it is refused.
    const entry = !cached || now - cached.checkedAt > this.cacheMs || idle(cached) ? await this.reload(hash, now, cached) : cached;
    if (entry.expiresAt !== null && now >= entry.expiresAt) throw this.drop(hash, 'Token expired');
    if (idle(entry)) throw this.drop(hash, 'Token expired');
    entry.lastUsedAt = now;
    if (now - entry.storedAt >= touchInterval(entry.idleMs)) {
      entry.storedAt = now;
      await this.store.touchToken(entry.tokenId, now);
    }
    return { user: entry.user, ...(entry.actor && { actor: entry.actor }) };
  }

  /** Reads the token again; this process may know of a later use than the one stored. */
  private async reload(hash: string, now: number, cached: CachedToken | undefined): Promise<CachedToken> {
    const entry = await this.load(hash, now);
    entry.lastUsedAt = Math.max(entry.lastUsedAt, cached?.lastUsedAt ?? 0);
    return entry;
  }

  private async load(hash: string, now: number): Promise<CachedToken> {
    this.cache.delete(hash);
    const row = await this.store.tokenByHash(hash);
    if (!row) throw unauthorized('Invalid or revoked token');
    const user = await this.store.userById(row.userId);
    if (!user || !user.isActive) throw this.drop(hash, 'Invalid or revoked token');
    const actor = row.actorId ? await this.store.userById(row.actorId) : undefined;
    if (row.actorId && (!actor || !actor.isActive || !actor.isAdmin)) throw this.drop(hash, 'Invalid or revoked token');
    if (row.credentialStamp !== null && row.credentialStamp !== credentialStamp(user.passwordHash, actor?.passwordHash)) throw this.drop(hash, 'Invalid or revoked token');
    const entry: CachedToken = {
      user: toContextUser(user),
      ...(actor && { actor: toContextUser(actor) }),
      tokenId: row.id,
      expiresAt: row.expiresAt,
      idleMs: row.idleMs,
      lastUsedAt: row.lastUsedAt,
      storedAt: row.lastUsedAt,
      checkedAt: now,
    };
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(hash, entry);
    return entry;
  }

  private drop(hash: string, message: string): ApiError {
    this.cache.delete(hash);
    return unauthorized(message);
  }

  /** Revokes one token, in every process of the database. */
  async revoke(token: string): Promise<void> {
    const hash = hashToken(token);
    this.cache.delete(hash);
    await this.store.deleteToken(hash);
    await this.announce({ kind: 'token', id: hash });
  }

  /** Revokes every token of a user (password change, deactivation). */
  async revokeUser(userId: string): Promise<void> {
    this.forget({ kind: 'user', id: userId });
    await this.store.deleteUserTokens(userId);
    await this.announce({ kind: 'user', id: userId });
  }

  /** Forgets cached users after a change to a user record (name, admin flag, activity), in every process. */
  async forgetUser(userId: string): Promise<void> {
    this.forget({ kind: 'user', id: userId });
    await this.announce({ kind: 'user', id: userId });
  }

  /** Drops this process's cached entries of a token (by hash) or of a user. */
  forget(event: CacheEvent): void {
    if (event.kind === 'token') this.cache.delete(event.id);
    if (event.kind !== 'user') return;
    for (const [hash, entry] of this.cache) if (entry.user.id === event.id || entry.actor?.id === event.id) this.cache.delete(hash);
  }

  /** Drops every cached token (invalidations may have been missed). */
  forgetAll(): void {
    this.cache.clear();
  }
}
