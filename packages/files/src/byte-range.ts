import type { Response } from 'express';
import { ApiError } from '@entity-records/core';

/** Bytes `start` to `end` of some contents, both included (as in `Content-Range`). */
export interface ByteRange {
  start: number;
  end: number;
}

const SINGLE = /^bytes=(\d*)-(\d*)$/;

/**
 * The one range of a `Range` header (RFC 9110 §14), against contents of `size` bytes: undefined
 * when the whole contents are to be sent (no header, several ranges, another unit, a malformed
 * or reversed range), `'unsatisfiable'` when it starts past the end.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = header === undefined ? null : SINGLE.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  const [first, last] = [match[1] === '' ? undefined : Number(match[1]), match[2] === '' ? undefined : Number(match[2])];
  if (first === undefined) {
    // A suffix: the last `last` bytes.
    if (last === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - (last as number)), end: size - 1 };
  }
  if (last !== undefined && last < first) return undefined;
  if (first >= size) return 'unsatisfiable';
  return { start: first, end: Math.min(last ?? size - 1, size - 1) };
}

/**
 * Whether the request's `If-None-Match` names the contents `etag` stands for (`*`, or the tag,
 * strong or weak: RFC 9110 compares weakly here): the client holds them, and the answer is 304.
 */
export function holdsContents(res: Response, etag: string): boolean {
  const header = res.req.get('if-none-match');
  if (header === undefined) return false;
  return header.split(',').some((item) => {
    const tag = item.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/**
 * The range a download answers for its request: the `Range` header's, unless an `If-Range`
 * names other contents than `etag` (then the whole contents). A range past the end is 416, with
 * a `Content-Range` that gives the size.
 */
export function requestedRange(res: Response, size: number, etag: string): ByteRange | undefined {
  const req = res.req;
  const ifRange = req.get('if-range');
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const range = parseRange(req.get('range'), size);
  if (range !== 'unsatisfiable') return range;
  res.setHeader('Content-Range', `bytes */${size}`);
  throw new ApiError('FILES_RANGE_NOT_SATISFIABLE', `The range ${req.get('range')} starts past the end of the ${size} bytes`, { details: { size } });
}
