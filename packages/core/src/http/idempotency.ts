import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import { requestFingerprint } from '../idempotency/fingerprint';
import type { HeldKey, IdempotencyKeys, KeptAnswer } from '../idempotency/idempotency-keys';
import { requestContext } from './request-context';

/**
 * The `Idempotency-Key` header over HTTP (CONTRACT §16). Exports the middleware the routes that
 * honour it are mounted with (`idempotent`: create, upsert, upsertAsync, entityMassUpdate, and
 * plugins' routes such as file uploads), `claimIdempotency` for routes that read their own body
 * (multipart), and `provideIdempotency`, which gives the instance's keys to the routes below it.
 * A route mounted without them ignores the header. A request without the header costs nothing.
 */

const KEYS = Symbol.for('@entity-records/core/idempotency');
type WithKeys = Request & { [KEYS]?: IdempotencyKeys };

/** The answer headers a replay repeats: what a client reads of the first answer. */
const KEPT_HEADERS = ['content-type', 'etag', 'vary', 'cache-control', 'location', 'x-status-reason'];

/** 1 to 255 printable ASCII characters (space included; Node trims the value's ends). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** Mounted on each generation's router: the routes below it find the instance's keys. */
export function provideIdempotency(keys: IdempotencyKeys): RequestHandler {
  return (req, _res, next) => {
    (req as WithKeys)[KEYS] = keys;
    next();
  };
}

/** The request's `Idempotency-Key`, or undefined without one; 400 for a malformed one. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const value = req.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_PATTERN.test(value)) {
    throw new ApiError('CORE_IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID, say)', {
      details: { issues: [{ path: ['Idempotency-Key'], code: 'invalid_format', message: 'expected 1 to 255 printable ASCII characters' }] },
    });
  }
  return value;
}

/** Sends a kept answer again, marked `Idempotent-Replayed: true`. */
function replay(res: Response, answer: KeptAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  res.setHeader('Idempotent-Replayed', 'true');
  res.send(answer.body);
}

/**
 * Hands the request's answer to the key it holds as the answer goes out: the answer is kept (or
 * the key freed) before the client gets it, so that a repeat sent after the answer replays it.
 */
function keepAnswer(res: Response, held: HeldKey): void {
  const send = res.send;
  res.send = function keep(this: Response, body?: unknown) {
    // An object goes through `json`, which comes back here with its text.
    if (body !== undefined && body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) return send.call(this, body);
    res.send = send;
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = res.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    const text = body === undefined || body === null ? '' : Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
    // `finish` never rejects. Something else may have answered meanwhile (an error after the answer).
    void held.finish({ status: res.statusCode, headers, body: text }).then(() => {
      if (res.headersSent) return;
      try {
        send.call(res, body);
      } catch (error) {
        res.destroy(error instanceof Error ? error : undefined);
      }
    });
    return res;
  };
}

/**
 * Claims the request's `Idempotency-Key` for its method, path and `body` (what the route read:
 * the parsed JSON, or the parts of a multipart body). True when the answer went out already (a
 * replay): the route stops there. False when the route runs: there is no key (or the route is
 * outside an instance's router), or the key is now this request's and its answer will be kept.
 * Throws 422 `CORE_IDEMPOTENCY_MISMATCH` and 409 `CORE_IDEMPOTENCY_IN_PROGRESS`.
 */
export async function claimIdempotency(req: Request, res: Response, body: unknown): Promise<boolean> {
  const key = idempotencyKeyOf(req);
  const keys = (req as WithKeys)[KEYS];
  if (key === undefined || !keys) return false;
  const userId = requestContext(req).user?.id ?? '';
  const claim = await keys.claim({ userId, key, fingerprint: requestFingerprint({ method: req.method, url: req.originalUrl, body }) });
  if ('replay' in claim) {
    replay(res, claim.replay);
    return true;
  }
  keepAnswer(res, claim.held);
  return false;
}

/**
 * Middleware of a route with a JSON body that honours `Idempotency-Key`: mount it before the
 * handler (`router.post('/Thing', idempotent, handler)`).
 */
export const idempotent: RequestHandler = (req, res, next) => {
  if (req.headers['idempotency-key'] === undefined) return next();
  claimIdempotency(req, res, req.body).then((answered) => {
    if (!answered) next();
  }, next);
};
