import type { Request, RequestHandler, Router } from 'express';
import type { AuthService, TokenTimes } from '../auth/auth-service';
import { unauthorized } from '../auth/auth-service';
import type { ContextUser } from '../context';
import { ApiError } from '../errors';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** What the full session answer tells about the user's rights, per entity type. */
export type AclProvider = (user: ContextUser) => Promise<Record<string, unknown>> | Record<string, unknown>;

function basicCredentials(req: Request): { userName: string; password: string } | undefined {
  const header = req.get('authorization');
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Malformed Authorization header');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw unauthorized('Malformed Basic credentials');
  return { userName: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function hours(req: Request, name: string): number | undefined {
  const value = req.get(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new ApiError('CORE_VALIDATION_FAILED', `${name} must be a number of hours (0 = no limit)`, {
      details: { issues: [{ path: [name], code: 'invalid_type', message: `${name} must be a non-negative number` }] },
    });
  }
  return n;
}

const tokenOf = (req: Request) => req.get('authorization-token') || undefined;

/** Requires `Authorization-Token`; Basic credentials are for the session routes only (401). */
export function requireToken(auth: AuthService): RequestHandler {
  return toHandler(async (req, _res, next) => {
    const token = tokenOf(req);
    if (!token) throw unauthorized(req.get('authorization') ? 'Use Authorization-Token; Basic credentials only obtain a token' : 'Authentication required');
    requestContext(req).user = await auth.authenticate(token);
    next();
  });
}

/**
 * `GET` signs in with Basic credentials (or reads the session of a token) and answers
 * `{authorizationToken}` or, without `Authorization-Token-Only: true`, also `user` and `acl`.
 * `DELETE` revokes the token presented.
 */
export function mountSessionRoutes(router: Router, paths: string[], auth: AuthService, acl: AclProvider): void {
  const signIn = toHandler(async (req, res) => {
    const credentials = basicCredentials(req);
    let token = tokenOf(req);
    let user: ContextUser;
    if (credentials) {
      const times: TokenTimes = {
        lifetimeHours: hours(req, 'authorization-token-lifetime'),
        idleHours: hours(req, 'authorization-token-idletime'),
      };
      user = await auth.verifyCredentials(credentials.userName, credentials.password);
      token = await auth.issueToken(user, times);
    } else if (token) {
      user = await auth.authenticate(token);
    } else {
      throw unauthorized();
    }
    res.setHeader('Cache-Control', 'no-store');
    if (req.get('authorization-token-only') === 'true') {
      res.json({ authorizationToken: token });
      return;
    }
    const { id, userName, name, isAdmin, rolesIds } = user;
    res.json({ authorizationToken: token, user: { id, userName, name, isAdmin, rolesIds }, acl: await acl(user) });
  });
  const signOut = toHandler(async (req, res) => {
    const token = tokenOf(req);
    if (!token) throw unauthorized();
    await auth.authenticate(token);
    await auth.revoke(token);
    res.json(true);
  });
  for (const path of paths) {
    router.get(path, signIn);
    router.delete(path, signOut);
  }
}
