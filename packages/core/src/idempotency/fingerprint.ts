import { createHash, type Hash } from 'node:crypto';

/**
 * What makes two requests with one `Idempotency-Key` the same request: the method, the path (with
 * its query string, as sent) and the body as parsed, in a canonical JSON form (object keys sorted,
 * array order kept). Two bodies that differ only in white space or key order are the same body;
 * routes that read their body themselves (multipart) fingerprint what they read (their parts).
 */

/** Text is hashed in pieces of about this size: a body of 32 MB is never copied whole. */
const PIECE = 64 * 1024;

/** Writes the canonical JSON of `value` through `write`; `undefined` (no body) writes nothing. */
function writeCanonical(value: unknown, write: (text: string) => void): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    write('[');
    value.forEach((item, index) => {
      if (index > 0) write(',');
      if (item === undefined) write('null');
      else writeCanonical(item, write);
    });
    write(']');
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    write('{');
    entries.forEach(([key, item], index) => {
      write(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`);
      writeCanonical(item, write);
    });
    write('}');
    return;
  }
  // A number beyond a double's range (1e400 in the body's text) parses to Infinity, which JSON
  // writes as null: written so, it would make the body the same as one that sent null, and a
  // repeat of either would get the other's answer. Its own text keeps them apart.
  if (typeof value === 'number' && !Number.isFinite(value)) write(String(value));
  else write(JSON.stringify(value) ?? 'null');
}

/** JSON text of `value` with the keys of every object sorted; `undefined` (no body) is the empty text. */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  writeCanonical(value, (text) => parts.push(text));
  return parts.join('');
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
  const hash: Hash = createHash('sha256').update(`${method.toUpperCase()} ${url}\n`);
  let pending = '';
  writeCanonical(body, (text) => {
    pending += text;
    if (pending.length >= PIECE) {
      hash.update(pending);
      pending = '';
    }
  });
  return hash.update(pending).digest('hex');
}
