import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { ByteRange } from './byte-range';
import { cleanMimeType } from './file-name';

/** `attachment; filename="plain"; filename*=UTF-8''encoded` (RFC 6266), safe for any name. */
export function contentDisposition(kind: 'attachment' | 'inline', name: string): string {
  const plain = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${plain}"; filename*=UTF-8''${encoded}`;
}

export interface ContentResponse {
  /** The bytes sent: the whole contents, or only those of `range`. */
  stream: Readable;
  name: string;
  mimeType: unknown;
  /** Size of the whole contents in bytes. */
  size?: number;
  disposition: 'attachment' | 'inline';
  /** Cache-Control; default `private, no-cache`. */
  cache?: string;
  /**
   * A strong validator of the contents (`"<sha256>"`): sent as `ETag`, with `Accept-Ranges: bytes`
   * (the route answers `Range` requests; see `requestedRange`).
   */
  etag?: string;
  /** The part `stream` holds (from `requestedRange`): the answer is 206 with `Content-Range`. */
  range?: ByteRange;
}

/**
 * Streams stored contents as a response. Uploaded contents are never trusted to be harmless: the
 * browser may not sniff another type, and a sandboxing policy keeps an HTML or SVG file shown
 * inline from running scripts with this site's rights.
 */
export async function sendContent(res: Response, content: ContentResponse): Promise<void> {
  const { range, size } = content;
  res.status(range ? 206 : 200);
  res.setHeader('Content-Type', cleanMimeType(content.mimeType));
  if (range) {
    res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size ?? '*'}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
  } else if (size !== undefined) {
    res.setHeader('Content-Length', String(size));
  }
  if (content.etag) {
    res.setHeader('ETag', content.etag);
    res.setHeader('Accept-Ranges', 'bytes');
  }
  res.setHeader('Content-Disposition', contentDisposition(content.disposition, content.name));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; sandbox");
  res.setHeader('Cache-Control', content.cache ?? 'private, no-cache');
  try {
    await pipeline(content.stream, res);
  } catch {
    // The client went away, or storage failed mid-way: the status is sent, so end the connection.
    res.destroy();
  }
}
