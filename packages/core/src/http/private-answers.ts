import type { RequestHandler } from 'express';

/**
 * The request headers an authenticated answer depends on besides its URL: the caller (roles,
 * field rights, the `own` rule) and the headers that shape records. An answer's `ETag` (a record's
 * version, or Express's hash of a list) is the same whatever they say, so a cache must keep the
 * answers apart by them.
 */
export const ANSWER_VARY = 'Authorization-Token, Cookie, language, With-Meta, Flatten-Attributes';

/**
 * Marks every answer of an authenticated route as the caller's own: `Vary` added to what the
 * host's middleware set (CORS: `Origin`), and, unless the host chose one, `Cache-Control: private,
 * no-cache`. The token travels in a header of its own, not `Authorization`, which is what keeps
 * shared caches from storing answers by default (RFC 9111 §3.5): without this, a proxy or CDN
 * could keep one user's list or metadata and hand it to the next. A route that knows better
 * (downloads, sign-in, server-sent events) sets its own `Cache-Control` over this one.
 */
export const privateAnswers: RequestHandler = (_req, res, next) => {
  res.vary(ANSWER_VARY);
  if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'private, no-cache');
  next();
};
