import type { Request, RequestHandler, Response, Router } from 'express';
import type { AuthOptions, AuthService, Session, TokenTimes } from '../auth/auth-service';
import { unauthorized } from '../auth/auth-service';
import type { LoginThrottle } from '../auth/login-throttle';
import type { ContextUser } from '../context';
import { ApiError, assertKnownKeys, objectBody, validationFailed } from '../errors';
import { JSON_TYPES } from './body';
import { headerText } from './header-text';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** What the full session answer tells about the user's rights, per entity type. */
export type AclProvider = (user: ContextUser) => Promise<Record<string, unknown>> | Record<string, unknown>;

export interface SessionParts {
  auth: AuthService;
  throttle: LoginThrottle;
  acl: AclProvider;
  /** Secure cookies (the public URL is https). */
  secureCookies: boolean;
}

/** The browser session cookie (HttpOnly; scripts cannot read it). */
export const SESSION_COOKIE = 'er_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface Credentials {
  userName: string;
  password: string;
}

function basicCredentials(req: Request): Credentials | undefined {
  const header = req.get('authorization');
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Malformed Authorization header');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw unauthorized('Malformed Basic credentials');
  return { userName: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The longest token time a header may ask for: 100 years (a time past it is no longer a time in milliseconds the database keeps). */
const MAX_TOKEN_HOURS = 876_000;

/** A decimal number as JSON writes one, without its sign (`Number` also reads `0x10`, `0b1`, `Infinity`). */
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function hours(req: Request, name: string): number | undefined {
  const value = req.get(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!DECIMAL.test(value.trim()) || !Number.isFinite(n) || n < 0 || n > MAX_TOKEN_HOURS) {
    throw new ApiError('CORE_VALIDATION_FAILED', `${name} must be a number of hours from 0 to ${MAX_TOKEN_HOURS} (0 = no limit)`, {
      details: { issues: [{ path: [name], code: 'invalid_type', message: `${name} must be a number from 0 to ${MAX_TOKEN_HOURS}` }] },
    });
  }
  return n;
}

/** The token of the session cookie; a value that is not valid percent-encoding is no token (401). */
function cookieToken(req: Request): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name !== SESSION_COOKIE) continue;
    try {
      return decodeURIComponent(rest.join('=')) || undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * A state-changing request authenticated by the session cookie alone must carry
 * `X-Requested-With: XMLHttpRequest` (CSRF guard, 403): another site cannot set that header.
 */
function assertNotCrossSite(req: Request): void {
  if (!SAFE_METHODS.has(req.method) && req.get('x-requested-with') !== 'XMLHttpRequest') {
    throw new ApiError('CORE_FORBIDDEN', 'A cookie-authenticated change needs the header X-Requested-With: XMLHttpRequest');
  }
}

const headerToken = (req: Request) => req.get('authorization-token') || undefined;
/** A header meaning yes: `true` (any case) or `1`. */
const isTrue = (value: string | undefined) => value !== undefined && /^(true|1)$/i.test(value.trim());
const address = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

const tokenTimes = (req: Request): TokenTimes => ({
  lifetimeHours: hours(req, 'authorization-token-lifetime'),
  idleHours: hours(req, 'authorization-token-idletime'),
});

/**
 * Requires `Authorization-Token`, or the session cookie; a state-changing request authenticated
 * by the cookie alone must carry `X-Requested-With: XMLHttpRequest` (CSRF guard, 403). Basic
 * credentials are for the session routes only (401).
 */
/** Sessions found before a request's body was read (`identifyBeforeBody`), for `requireToken`. */
const earlySessions = new WeakMap<Request, Session>();

/**
 * For a body the router reads only for a known caller (over 1 MiB, see `jsonBody`): finds the
 * session before a byte of it is read, or answers 401 and closes the connection, so that nobody
 * without credentials has the server read, hold or parse a large body. A sign-in (`signInPaths`:
 * the cookie sign-in, which needs no credentials) is 413 instead: no sign-in body is that large,
 * and the sign-in route has no credentials to ask for.
 */
export function identifyBeforeBody(auth: AuthService, { resolveUser, signInPaths }: { resolveUser?: AuthOptions['resolveUser']; signInPaths: readonly string[] }): RequestHandler {
  return toHandler(async (req, res, next) => {
    try {
      if (signInPaths.includes(req.path)) throw new ApiError('CORE_PAYLOAD_TOO_LARGE', 'A sign-in body must not be larger than 1 MiB');
      earlySessions.set(req, await requestSession(auth, { req, resolveUser }));
    } catch (error) {
      // The rest of the body is not read: the connection ends with the answer.
      res.setHeader('Connection', 'close');
      throw error;
    }
    next();
  });
}

export function requireToken(auth: AuthService, resolveUser?: AuthOptions['resolveUser']): RequestHandler {
  return toHandler(async (req, _res, next) => {
    const session = earlySessions.get(req) ?? (await requestSession(auth, { req, resolveUser }));
    const ctx = requestContext(req);
    ctx.user = session.user;
    if (session.actor) ctx.actor = session.actor;
    next();
  });
}

/**
 * Who a request acts for: its `Authorization-Token`, else the user the host vouches for
 * (`resolveUser`), else the session cookie (with the CSRF guard); 401 without any.
 */
export async function requestSession(auth: AuthService, { req, resolveUser }: { req: Request; resolveUser?: AuthOptions['resolveUser'] }): Promise<Session> {
  const token = headerToken(req);
  if (token) return auth.authenticate(token);
  const hostUser = resolveUser ? await resolveUser(req) : undefined;
  if (typeof hostUser === 'string' && hostUser) return auth.sessionOf(hostUser);
  const cookie = cookieToken(req);
  if (cookie) {
    assertNotCrossSite(req);
    return auth.authenticate(cookie);
  }
  throw unauthorized(req.get('authorization') ? 'Use Authorization-Token; Basic credentials only obtain a token' : 'Authentication required');
}

/** The token a request authenticates with (header first, then the session cookie), if any. */
export const requestToken = (req: Request): string | undefined => headerToken(req) ?? cookieToken(req);

async function sessionBody(parts: SessionParts, session: Session, token?: string) {
  const { id, userName, name, isAdmin, rolesIds } = session.user;
  return {
    ...(token !== undefined && { authorizationToken: token }),
    user: { id, userName, name, isAdmin, rolesIds },
    ...(session.actor && { actor: { id: session.actor.id, userName: session.actor.userName, name: session.actor.name } }),
    acl: await parts.acl(session.user),
  };
}

/** Sign-in with a password, throttled; with `Authorization-Delegate`, an admin acts for another user. */
async function signInWithPassword(parts: SessionParts, req: Request, { userName, password }: Credentials): Promise<Session> {
  const user = await parts.throttle.attempt(userName, address(req), () => parts.auth.verifyCredentials(userName, password));
  // A user name, as Basic credentials carry it: UTF-8.
  const delegate = headerText(req, 'authorization-delegate');
  return delegate ? parts.auth.delegate(user, delegate) : { user };
}

/**
 * `Authorization-Delegate` on a session read with a token or the cookie: 400. Only a sign-in with
 * the admin's own credentials opens a delegated session; ignored, the header would give a client
 * that asked for a token acting for a user the caller's own token, with all its rights.
 */
function refuseDelegateWithoutCredentials(req: Request): void {
  if (!req.get('authorization-delegate')) return;
  const message = 'Authorization-Delegate needs the Basic credentials (or the cookie sign-in) of an admin; a token or session cookie cannot act for another user';
  throw new ApiError('CORE_VALIDATION_FAILED', message, {
    details: { issues: [{ path: ['Authorization-Delegate'], code: 'not_allowed', message: 'Authorization-Delegate is taken only with Basic credentials' }] },
  });
}

/** The cookie sign-in of a session path (`/userSession/cookie`). */
export const cookiePath = (sessionPath: string): string => `${sessionPath}/cookie`;

/**
 * `GET` signs in with Basic credentials (or reads the session of a token) and answers
 * `{authorizationToken}` or, without `Authorization-Token-Only: true`, also `user` and `acl`.
 * `DELETE` revokes the token presented.
 */
export function mountSessionRoutes(router: Router, paths: string[], parts: SessionParts): void {
  const { auth } = parts;
  const signIn = toHandler(async (req, res) => {
    const credentials = basicCredentials(req);
    let token = headerToken(req);
    let session: Session;
    if (credentials) {
      session = await signInWithPassword(parts, req, credentials);
      // HEAD checks the credentials as GET does but answers no body: a token made then could
      // never be read, and would only pile up until it expired.
      if (req.method === 'HEAD') {
        res.setHeader('Cache-Control', 'no-store');
        res.type('json').end();
        return;
      }
      token = await auth.issueToken(session.user, tokenTimes(req), session.actor);
    } else if (token) {
      session = await auth.authenticate(token);
      refuseDelegateWithoutCredentials(req);
    } else {
      // A browser holding only the session cookie may read its session (after a reload), but
      // not its token: the cookie is HttpOnly so that scripts never see it.
      const cookie = cookieToken(req);
      if (!cookie) throw unauthorized();
      session = await auth.authenticate(cookie);
      refuseDelegateWithoutCredentials(req);
    }
    res.setHeader('Cache-Control', 'no-store');
    if (token !== undefined && isTrue(req.get('authorization-token-only'))) res.json({ authorizationToken: token });
    else res.json(await sessionBody(parts, session, token));
  });
  const signOut = toHandler(async (req, res) => {
    let token = headerToken(req);
    if (!token && (token = cookieToken(req))) assertNotCrossSite(req);
    if (!token) throw unauthorized();
    await auth.authenticate(token);
    await auth.revoke(token);
    res.json(true);
  });
  const cookieIn = toHandler(async (req, res) => {
    // Generation B reads a body of any type as JSON; a form of another site can send text/plain
    // (never application/json without the browser asking first) and would sign the browser in
    // as the form's author (login CSRF): this route takes JSON only, in both generations.
    if (!req.is(JSON_TYPES)) throw new ApiError('CORE_UNSUPPORTED_MEDIA_TYPE', 'A cookie sign-in body must be application/json');
    const body = objectBody(req.body, 'A cookie sign-in body');
    assertKnownKeys(body, ['userName', 'password'], 'a cookie sign-in body');
    // One issue for each of the two that is missing or not a string.
    const issues = (['userName', 'password'] as const)
      .filter((key) => typeof body[key] !== 'string')
      .map((key) => (body[key] === undefined ? { path: [key], code: 'required', message: `${key} is required` } : { path: [key], code: 'invalid_type', message: `${key} must be a string` }));
    if (issues.length) throw validationFailed('userName and password are required, as strings', issues);
    const session = await signInWithPassword(parts, req, { userName: body.userName as string, password: body.password as string });
    const token = await auth.issueToken(session.user, tokenTimes(req), session.actor);
    setCookie(res, token, parts.secureCookies);
    res.setHeader('Cache-Control', 'no-store');
    res.json(await sessionBody(parts, session));
  });
  const cookieOut = toHandler(async (req, res) => {
    const token = cookieToken(req);
    if (token) {
      assertNotCrossSite(req);
      await auth.revoke(token);
    }
    setCookie(res, '', parts.secureCookies);
    res.json(true);
  });
  for (const path of paths) {
    router.get(path, signIn);
    router.delete(path, signOut);
    router.post(cookiePath(path), cookieIn);
    router.delete(cookiePath(path), cookieOut);
  }
}

function setCookie(res: Response, token: string, secure: boolean): void {
  const parts = [`${SESSION_COOKIE}=${encodeURIComponent(token)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (secure) parts.push('Secure');
  if (!token) parts.push('Max-Age=0');
  res.append('Set-Cookie', parts.join('; '));
}
