import { createHash } from 'node:crypto';

/**
 * What makes two requests with one `Idempotency-Key` the same request: the method, the path (with
 * its query string, as sent) and the body as parsed, in a canonical JSON form (object keys sorted,
 * array order kept). Two bodies that differ only in white space or key order are the same body;
 * routes that read their body themselves (multipart) fingerprint what they read (their parts).
 */

/** JSON text of `value` with the keys of every object sorted; `undefined` (no body) is the empty text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The request as sent, reduced to what a repeat must match. */
export interface RequestShape {
  method: string;
  /** The path and query string as sent (`req.originalUrl`). */
  url: string;
  /** The parsed body, or what stands for it (the parts of a multipart body). */
  body: unknown;
}

/** sha256 (hex) of the method, the path and the canonical body. */
export function requestFingerprint({ method, url, body }: RequestShape): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${url}\n`).update(canonicalJson(body)).digest('hex');
}
