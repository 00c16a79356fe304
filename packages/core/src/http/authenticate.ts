import type { RequestHandler } from 'express';
import type { AuthOptions, AuthService } from '../auth/auth-service';
import { ApiError } from '../errors';
import type { Logger } from '../logger';
import { requestSession } from './auth-routes';
import { errorHandler } from './error-handler';
import { requestContext } from './request-context';
import { requestIdHeader } from './request-id';

export interface AuthenticateParts {
  ready: () => Promise<void>;
  auth: AuthService;
  resolveUser?: AuthOptions['resolveUser'];
  logger: Logger;
  translateError?: (error: unknown) => ApiError | undefined;
  /** No credentials: go on without a user instead of 401. */
  optional?: boolean;
}

/**
 * The API's authentication for the host's own routes: the user goes on `requestContext(req)`;
 * a failure is answered with the API's JSON error body (401), without the host's error handler.
 */
export function authenticateMiddleware(parts: AuthenticateParts): RequestHandler {
  const answer = errorHandler(parts.logger, parts.translateError);
  return (req, res, next) => {
    requestIdHeader(req, res, () => undefined);
    const run = async () => {
      await parts.ready();
      const ctx = requestContext(req);
      try {
        const session = await requestSession(parts.auth, { req, resolveUser: parts.resolveUser });
        ctx.user = session.user;
        if (session.actor) ctx.actor = session.actor;
      } catch (error) {
        if (!(parts.optional && error instanceof ApiError && error.code === 'CORE_UNAUTHORIZED')) throw error;
      }
    };
    run().then(() => next(), (error: unknown) => answer(error, req, res, next));
  };
}
