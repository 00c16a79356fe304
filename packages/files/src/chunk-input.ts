import { ApiError } from '@entity-records/core';
import { decodeDataUrl } from './base64';
import { assertFileName } from './file-name';

/** One chunk as the client sends it (spec: File upload payload fields, chunk method). */
export interface ChunkInput {
  id: string;
  name: string;
  fileUniqueHash: string;
  start: number;
  piecesCount: number;
  bytes: Buffer;
}

function issue(path: string, message: string, code = 'invalid_type'): ApiError {
  return new ApiError('CORE_VALIDATION_FAILED', message, { details: { issues: [{ path: [path], code, message }] } });
}

/** A JSON integer of at least `min` (spec: `start` and `piecesCount` are integers; a string is a wrong type). */
function wholeNumber(value: unknown, path: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw issue(path, `${path} must be an integer (a JSON number, not a string) of at least ${min}`);
  if (value < min) throw issue(path, `${path} must be an integer of at least ${min}`, 'too_small');
  return value;
}

/**
 * A File id a client chose: 1 to 64 characters of `A-Z a-z 0-9 _ -`, else 400 `CORE_INVALID_ID`,
 * as a create of any record with such an id (another type, `''`, included) answers.
 */
export function assertClientId(id: unknown): asserts id is string {
  if (typeof id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(id)) return;
  const message = 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -';
  throw new ApiError('CORE_INVALID_ID', message, { details: { id, issues: [{ path: ['id'], code: 'invalid_format', message }] } });
}

/** Checks a chunk body: `id`, `name`, `fileUniqueHash`, `start`, `piecesCount` and a base64 `piece`. */
export function parseChunk(body: Record<string, unknown>, maxPieces: number): ChunkInput {
  const { id, name, fileUniqueHash } = body;
  if (id === undefined || id === null) throw issue('id', 'id is required for chunks: 1 to 64 characters of A-Z, a-z, 0-9, _ and -, the same for every chunk of a file');
  assertClientId(id);
  if (typeof name !== 'string' || name === '') throw issue('name', 'name is required');
  assertFileName(name);
  if (typeof fileUniqueHash !== 'string' || fileUniqueHash === '' || fileUniqueHash.length > 255) throw issue('fileUniqueHash', 'fileUniqueHash must be a string of 1 to 255 characters');
  const piecesCount = wholeNumber(body.piecesCount, 'piecesCount', 1);
  if (piecesCount > maxPieces) throw issue('piecesCount', `piecesCount must be at most ${maxPieces}`);
  const start = wholeNumber(body.start, 'start', 0);
  const { bytes } = decodeDataUrl(body.piece, 'piece');
  if (bytes.length === 0 && piecesCount !== 1) throw issue('piece', 'piece must not be empty');
  return { id, name, fileUniqueHash, start, piecesCount, bytes };
}
