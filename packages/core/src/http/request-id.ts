import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { requestContext } from './request-context';

/** An id a proxy or client sent that is safe to log and echo: printable, no spaces, not too long. */
const SANE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The request's id: the `X-Request-Id` it came with when sane, else a new UUID; kept on its context. */
export function requestId(req: Request): string {
  const ctx = requestContext(req);
  if (ctx.requestId === undefined) {
    const sent = req.get('x-request-id');
    ctx.requestId = sent !== undefined && SANE_ID.test(sent) ? sent : randomUUID();
  }
  return ctx.requestId;
}

/** Reads or makes the request id and echoes it in `X-Request-Id`, so logs and answers can be matched. */
export const requestIdHeader: RequestHandler = (req, res, next) => {
  res.setHeader('X-Request-Id', requestId(req));
  next();
};
