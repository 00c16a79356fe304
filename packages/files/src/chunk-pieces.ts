import { createHash } from 'node:crypto';
import { ApiError } from '@entity-records/core';
import type { ChunkRow } from './chunk-store';

/** What is known of the chunks of an upload, from the pieces received. */

export const conflict = (message: string, details?: Record<string, unknown>) => new ApiError('FILES_CHUNK_CONFLICT', message, { details });

export const offsets = (chunks: readonly ChunkRow[]) => [...chunks].sort((a, b) => a.start - b.start).map((c) => String(c.start));

/** A chunk as received: where it goes, how long it is and the sha256 of its bytes. */
export interface Piece {
  start: number;
  size: number;
  hash: string;
}

/**
 * How a new chunk relates to those received: the same one again (same offset, size and bytes),
 * overlapping another (other bytes at the same offset included), or new. `hashOf` finds the hash
 * of a chunk recorded without one, or undefined when its bytes are gone.
 */
export async function relation(
  chunks: readonly ChunkRow[],
  piece: Piece,
  hashOf: (c: ChunkRow) => Promise<string | undefined>,
): Promise<'repeat' | 'overlap' | 'new'> {
  const { start, size } = piece;
  for (const c of chunks) {
    if (c.start === start) {
      if (c.size !== size) return 'overlap';
      const stored = c.hash ?? (await hashOf(c));
      return stored === undefined || stored === piece.hash ? 'repeat' : 'overlap';
    }
    if (start < c.start + c.size && c.start < start + size) return 'overlap';
  }
  return 'new';
}

export const overlaps = ({ start, size }: Piece) => conflict(`The chunk at ${start} (${size} bytes) overlaps a chunk already received or holds other bytes than it`, { start });

export async function sha256Of(stream: AsyncIterable<Buffer>): Promise<string> {
  const hash = createHash('sha256');
  for await (const part of stream) hash.update(part);
  return hash.digest('hex');
}

/** Whether the chunks cover 0 … total without gaps. */
export function contiguous(chunks: readonly ChunkRow[]): boolean {
  let end = 0;
  for (const c of [...chunks].sort((a, b) => a.start - b.start)) {
    if (c.start !== end) return false;
    end += c.size;
  }
  return true;
}
