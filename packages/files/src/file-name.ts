import { ApiError } from '@entity-records/core';

const MAX_NAME_LENGTH = 255;

const refuse = (message: string) =>
  new ApiError('FILES_NAME_INVALID', message, { details: { issues: [{ path: ['name'], code: 'invalid_format', message }] } });

/**
 * Refuses a file name that could mean a path or break a header: path separators (`/`, `\`), a
 * `..` or `.` alone, NUL, CR, LF or other control characters. Storage never uses the name, but
 * clients save downloads under it.
 */
export function assertFileName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) return; // required and type checks are core's
  if (name.length > MAX_NAME_LENGTH) throw refuse(`name must be at most ${MAX_NAME_LENGTH} characters`);
  if (/[\\/]/.test(name)) throw refuse('name must not contain a path separator');
  if (name === '..' || name === '.') throw refuse('name must not be a relative path segment');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) throw refuse('name must not contain NUL, CR, LF or other control characters');
}

const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/** A media type without parameters, lower case, or `application/octet-stream` when it is not one. */
export function cleanMimeType(value: unknown): string {
  if (typeof value !== 'string') return 'application/octet-stream';
  const type = value.split(';')[0].trim().toLowerCase();
  return MIME.test(type) ? type : 'application/octet-stream';
}

/** A media type guessed from a name's extension (chunks carry none; curl sends octet-stream). */
const BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', avif: 'image/avif',
  tif: 'image/tiff', tiff: 'image/tiff', svg: 'image/svg+xml', pdf: 'application/pdf', txt: 'text/plain', csv: 'text/csv',
  json: 'application/json', xml: 'application/xml', zip: 'application/zip', mp4: 'video/mp4', mp3: 'audio/mpeg',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  html: 'text/html', htm: 'text/html',
};

export function mimeTypeOf(name: string): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return (ext && BY_EXTENSION[ext]) || 'application/octet-stream';
}
