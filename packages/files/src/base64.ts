import { ApiError } from '@entity-records/core';
import { cleanMimeType } from './file-name';

/** `data:<mime>[;param…];base64,<data>`; the data is checked separately. */
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*);base64,/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const invalid = (field: string, message: string) =>
  new ApiError('FILES_CONTENT_INVALID', message, { details: { issues: [{ path: [field], code: 'invalid_format', message }] } });

/**
 * Decodes a base64 data URL strictly: standard alphabet only, padding only at the end, a length
 * that base64 can have. Node's own decoder skips what it does not know; we refuse it instead.
 */
export function decodeDataUrl(value: unknown, field: string): { mimeType: string; bytes: Buffer } {
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string 'data:<mime type>;base64,<data>'`);
  const head = DATA_URL.exec(value);
  if (!head) throw invalid(field, `${field} must have the form 'data:<mime type>;base64,<data>'`);
  const data = value.slice(head[0].length);
  const unpadded = data.replace(/=+$/, '');
  if (!BASE64.test(data) || unpadded.length % 4 === 1 || (data.length !== unpadded.length && data.length % 4 !== 0)) {
    throw invalid(field, `${field} holds characters or a length that are not base64`);
  }
  const bytes = Buffer.from(data, 'base64');
  // Leftover bits in the last character must be zero (one text per byte sequence).
  if (bytes.toString('base64').replace(/=+$/, '') !== unpadded) throw invalid(field, `${field} is not canonical base64`);
  return { mimeType: cleanMimeType(head[1] || 'application/octet-stream'), bytes };
}
