import express, { type Response } from 'express';

/*
 * JSON answers written as Express's `res.json` writes them, without the ETag Express would add
 * (a hash of the text): answers that stand for no version of anything (bulk writes, errors).
 */

const { json: expressJson, send: expressSend } = express.response;

/**
 * Whether writing a record's JSON answer directly gives what `res.json` would: Express's own
 * `json` and `send` (not wrapped for an idempotency key, nor the host's), no JSON setting of the
 * app, no type or transfer coding set, a status with a body, and no `If-None-Match` that Express
 * would answer with 304. `res.json` costs a content-type parse and several header reads.
 */
export function answersAsExpressWould(res: Response): boolean {
  if (res.json !== expressJson || res.send !== expressSend) return false;
  const app = res.app;
  if (app.get('json replacer') || app.get('json spaces') || app.get('json escape')) return false;
  if (res.getHeader('content-type') !== undefined || res.getHeader('transfer-encoding') !== undefined) return false;
  const status = res.statusCode;
  if (status === 204 || status === 205 || status === 304) return false;
  // Express answers 304 for a matching If-None-Match; If-Modified-Since alone never matches, as
  // a record's answer has no Last-Modified.
  const method = res.req.method;
  return !((method === 'GET' || method === 'HEAD') && res.req.headers['if-none-match'] !== undefined);
}

/**
 * Sends `value` as `res.json` would; written directly where that gives the same bytes, it gets no
 * ETag of Express's hash (`res.json` adds one where none is set).
 */
export function sendUnhashed(res: Response, value: object): void {
  if (!answersAsExpressWould(res)) {
    res.json(value);
    return;
  }
  writeJson(res, JSON.stringify(value));
}

export function writeJson(res: Response, body: string | Buffer): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
