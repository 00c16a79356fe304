import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler, type Response } from 'express';
import { ApiError } from '../errors';
import type { Generation } from '../generations';
import type { ConcurrencyLimit } from '../util/concurrency-limit';
import { MAX_JSON_DEPTH, nestsDeeper, pathOfText } from '../util/json-depth';
import { series } from './series';

/** The content types of a JSON body. */
export const JSON_TYPES = ['application/json', 'application/*+json'];

const hasBody = (headers: Record<string, unknown>) =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/** Bodies larger than this (or of unknown length) are read only as `largeBodies` admits them. */
const LARGE_BODY_BYTES = 1024 * 1024;

const isLarge = (headers: Record<string, unknown>) => {
  const length = Number(headers['content-length']);
  return headers['transfer-encoding'] !== undefined || (Number.isFinite(length) && length > LARGE_BODY_BYTES);
};

/**
 * A large body waits for a place in `limit` before it is read, and keeps it until its answer is
 * sent: a body is held in memory several times over (bytes, text, parsed value, decoded file),
 * so however many clients send at once, only so many large ones are in memory.
 */
function admitLarge({ limit, exempt, identify }: { limit: ConcurrencyLimit; exempt?: (path: string) => boolean; identify?: RequestHandler }): RequestHandler {
  const admit: RequestHandler = (req, res, next) => {
    let closed = false;
    res.once('close', () => (closed = true));
    limit
      .run(() => new Promise<void>((release) => {
        if (closed) return release();
        res.once('close', () => release());
        next();
      }))
      .catch(next);
  };
  const steps = identify ? series(identify, admit) : admit;
  return (req, res, next) => (exempt?.(req.path) || !isLarge(req.headers) ? next() : steps(req, res, next));
}

export interface JsonBodyOptions {
  generation: Generation;
  limit: string | number;
  /** Paths whose bodies another parser reads (multipart). */
  exempt?: (path: string) => boolean;
  /** Admits large bodies, shared by both generations. */
  largeBodies: ConcurrencyLimit;
  /**
   * Runs before a large body is admitted or read: the router's check of the caller's credentials
   * (401 without them), so that only known callers have a large body read.
   */
  identifyLarge?: RequestHandler;
}

/**
 * A generation that takes JSON only (A) refuses a body of any other type (415); the other (B)
 * reads any body as JSON, as its clients send it. `exempt` paths (multipart upload) are left to their own parser.
 */
export function jsonBody(options: JsonBodyOptions): RequestHandler {
  const strictType: RequestHandler = (req, _res, next) => {
    if (options.exempt?.(req.path) || !hasBody(req.headers) || req.is(JSON_TYPES)) return next();
    next(new ApiError('CORE_UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json'));
  };
  const parse = express.json({
    limit: options.limit,
    strict: true,
    type: () => true,
    // body-parser's four arguments (request, response, bytes, charset), taken as one list.
    verify: (...[, res, raw, encoding]: [unknown, unknown, Buffer, string]) => {
      const { locals } = res as Response;
      if (/^utf-?8$/i.test(encoding)) {
        // JSON is UTF-8 (RFC 8259): bytes that are not would be read as U+FFFD, silently.
        if (!isUtf8(raw)) throw new ApiError('CORE_INVALID_JSON', 'The body is not valid UTF-8');
        if (escapesNul(raw)) locals.bodyHasNul = true;
        if (escapesLoneSurrogate(raw)) locals.bodyHasLoneSurrogate = true;
        return;
      }
      // Another charset the parser decodes (`utf-16`: two bytes a character) hides the escapes
      // from the byte scans above: its parsed text is searched instead.
      locals.bodyHasNul = locals.bodyHasLoneSurrogate = true;
    },
  });
  const parseUnlessExempt: RequestHandler = (req, res, next) => {
    if (options.exempt?.(req.path)) return next();
    // An error of the body's decoding (a `Content-Encoding: gzip` body that is no gzip) has no
    // type of its own: the body could not be read (400).
    parse(req, res, (error?: unknown) => {
      const untyped = error instanceof Error && (error as { type?: string }).type === undefined && (error as { status?: number }).status === 400;
      next(untyped ? new ApiError('CORE_INVALID_JSON', 'The body could not be read (its Content-Encoding does not match it)') : error);
    });
  };
  // PostgreSQL stores no NUL in text, SQLite would: a body with one is refused on both alike. The
  // issue names the first value (or key) holding one.
  const refuseNul: RequestHandler = (req, res, next) => {
    const path = res.locals.bodyHasNul ? pathOfText(req.body, (text) => text.includes('\u0000')) : undefined;
    if (!path) return next();
    next(new ApiError('CORE_VALIDATION_FAILED', 'Text in the body must not contain the NUL character (\\u0000)', {
      details: { issues: [{ path, code: 'nul_character', message: 'Text must not contain the NUL character' }] },
    }));
  };
  // Half of a UTF-16 pair is no character: each database would store another replacement of it.
  const refuseLoneSurrogate: RequestHandler = (req, res, next) => {
    const path = res.locals.bodyHasLoneSurrogate ? pathOfText(req.body, (text) => LONE_SURROGATE.test(text)) : undefined;
    if (!path) return next();
    next(new ApiError('CORE_VALIDATION_FAILED', 'Text in the body must be well-formed Unicode: an escape \\uD800-\\uDFFF must be one half of a surrogate pair', {
      details: { issues: [{ path, code: 'lone_surrogate', message: 'Text must not contain a lone surrogate' }] },
    }));
  };
  // Deeper JSON than any record or upsert needs would overflow the stack of later steps (500).
  const refuseDeep: RequestHandler = (req, _res, next) => {
    if (!nestsDeeper(req.body, MAX_JSON_DEPTH)) return next();
    next(new ApiError('CORE_INVALID_JSON', `The body must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`, { details: { maxDepth: MAX_JSON_DEPTH } }));
  };
  const common = [admitLarge({ limit: options.largeBodies, exempt: options.exempt, identify: options.identifyLarge }), parseUnlessExempt, refuseNul, refuseLoneSurrogate, refuseDeep];
  const steps = series(...(options.generation.jsonOnly ? [strictType, ...common] : common));
  // A request that announces no body (most reads) passes each step untouched, as it passes the
  // parser (body-parser's test): it skips them.
  return (req, res, next) => (announcesBody(req.headers) ? steps(req, res, next) : next());
}

/** body-parser's test of a body: a `Transfer-Encoding`, or a `Content-Length` (even `0`). */
const announcesBody = (headers: Record<string, unknown>) => headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined;

const NUL_ESCAPE = Buffer.from('\\u0000');

/** Half of a UTF-16 surrogate pair without its other half, in a parsed string. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a JSON text holds a NUL character: the escape `\u0000` (JSON allows NUL no other way)
 * after an odd run of backslashes (`\\u0000` is a backslash and the text `u0000`).
 */
function escapesNul(raw: Buffer): boolean {
  for (let at = raw.indexOf(NUL_ESCAPE); at >= 0; at = raw.indexOf(NUL_ESCAPE, at + 1)) {
    let slashes = 1;
    while (at - slashes >= 0 && raw[at - slashes] === 0x5c) slashes += 1;
    if (slashes % 2 === 1) return true;
  }
  return false;
}

const UNICODE_ESCAPE = Buffer.from('\\u');
const HEX = /^[0-9a-fA-F]{4}$/;

/**
 * Whether a JSON text escapes half of a UTF-16 surrogate pair alone: `\uD800`-`\uDBFF` not
 * followed by `\uDC00`-`\uDFFF`, or the latter without the former. (Raw bytes cannot encode one:
 * invalid UTF-8 is read as U+FFFD.) Only escapes after an even run of backslashes before them count.
 */
function escapesLoneSurrogate(raw: Buffer): boolean {
  let pendingHighEnd = -1;
  for (let at = raw.indexOf(UNICODE_ESCAPE); at >= 0; at = raw.indexOf(UNICODE_ESCAPE, at + 2)) {
    let slashes = 1;
    while (at - slashes >= 0 && raw[at - slashes] === 0x5c) slashes += 1;
    if (slashes % 2 === 0) continue;
    const hex = raw.toString('latin1', at + 2, at + 6);
    if (!HEX.test(hex)) continue;
    const unit = parseInt(hex, 16);
    const isLow = unit >= 0xdc00 && unit <= 0xdfff;
    if (pendingHighEnd >= 0 && !(isLow && at === pendingHighEnd)) return true;
    if (pendingHighEnd < 0 && isLow) return true;
    pendingHighEnd = unit >= 0xd800 && unit <= 0xdbff ? at + 6 : -1;
  }
  return pendingHighEnd >= 0;
}
