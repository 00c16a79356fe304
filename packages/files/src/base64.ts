import { ApiError } from '@entity-records/core';
import { cleanMimeType } from './file-name';

/** `data:<mime>[;param…];base64,` before the data. */
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*);base64,/;

const invalid = (field: string, message: string) =>
  new ApiError('FILES_CONTENT_INVALID', message, { details: { issues: [{ path: [field], code: 'invalid_format', message }] } });

/**
 * Whether `data` is base64 in the standard alphabet, padded (RFC 4648: a multiple of four
 * characters), padding only at the end, and no leftover bits. Node's decoder skips characters it does not know (and takes `-` and
 * `_`), so a skipped character shows as a shorter result; this costs one decode, no scan by
 * regular expression (which runs at a tenth of the speed on megabytes).
 */
function strictDecode(data: string): Buffer | undefined {
  let padding = 0;
  while (padding < 3 && data.charCodeAt(data.length - 1 - padding) === 61 /* = */) padding += 1;
  const length = data.length - padding;
  if (padding > 2 || data.length % 4 !== 0) return undefined;
  const firstEquals = data.indexOf('=');
  if ((firstEquals !== -1 && firstEquals < length) || data.includes('-') || data.includes('_')) return undefined;
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length !== Math.floor((length * 3) / 4)) return undefined;
  const tail = data.slice(length - (length % 4), length);
  if (tail && Buffer.from(tail, 'base64').toString('base64').replace(/=+$/, '') !== tail) return undefined;
  return bytes;
}

/** Decodes a base64 data URL strictly; anything that is not clean base64 is refused (400). */
export function decodeDataUrl(value: unknown, field: string): { mimeType: string; bytes: Buffer } {
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string 'data:<mime type>;base64,<data>'`);
  const head = DATA_URL.exec(value.slice(0, 300));
  if (!head) throw invalid(field, `${field} must have the form 'data:<mime type>;base64,<data>'`);
  const bytes = strictDecode(value.slice(head[0].length));
  if (!bytes) throw invalid(field, `${field} holds characters, padding or a length that are not base64`);
  return { mimeType: cleanMimeType(head[1] || 'application/octet-stream'), bytes };
}
