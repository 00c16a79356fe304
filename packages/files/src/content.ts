import { createHash, randomUUID } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { ApiError } from '@entity-records/core';
import type { ByteRange } from './byte-range';
import type { StorageDriver } from './declarations';

/** A fresh storage key for a file's contents, spread over directories by its first characters. */
export function newContentKey(): string {
  const id = randomUUID().replaceAll('-', '');
  return `files/${id.slice(0, 2)}/${id.slice(2, 4)}/${id}`;
}

/** Where contents are, or are to be, in storage. */
export interface StorageLocation {
  storage: StorageDriver;
  key: string;
}

/**
 * The stored bytes of a file (or those of `range`). Storage that has lost them (the driver's
 * ENOENT) answers 404 rather than a server error: the record is there, its contents are not.
 */
export async function readStored({ storage, key }: StorageLocation, range?: ByteRange): Promise<Readable> {
  try {
    return await storage.read(key, range);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new ApiError('CORE_NOT_FOUND', 'The contents of this file are missing from storage');
  }
}

export const tooLarge = (limit: number) => new ApiError('FILES_TOO_LARGE', `The file is larger than the limit of ${limit} bytes`, { details: { maxFileSize: limit } });

/** Counts (and unless told not to, hashes) what passes through; past `limit` bytes it fails with 413. */
export class HashingCounter extends Transform {
  private readonly hash?: ReturnType<typeof createHash>;
  bytes = 0;

  constructor(
    private readonly limit: number,
    hashing = true,
  ) {
    super();
    if (hashing) this.hash = createHash('sha256');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null, data?: Buffer) => void): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) return callback(tooLarge(this.limit));
    this.hash?.update(chunk);
    callback(null, chunk);
  }

  digest(): string {
    return this.hash ? this.hash.digest('hex') : '';
  }
}

/**
 * Streams `source` into storage under `key`, hashing (sha256, unless `hash: false`) and counting on
 * the way; memory stays at a few buffers whatever the size. A failure removes what was written.
 */
export async function writeContent(
  { storage, key }: StorageLocation,
  source: Readable | Buffer,
  limits: { maxBytes: number; hash?: boolean },
): Promise<{ size: number; hash: string }> {
  const counter = new HashingCounter(limits.maxBytes, limits.hash !== false);
  const input = Buffer.isBuffer(source) ? Readable.from([source]) : source;
  // A failing source must fail the counter too, or the write would wait forever. The counter's
  // own error may come before storage listens (it may first create a directory): it is read
  // back from `counter.errored` below.
  input.once('error', (error) => counter.destroy(error));
  counter.on('error', () => undefined);
  try {
    await storage.write(key, input.pipe(counter));
  } catch (error) {
    await storage.delete(key).catch(() => undefined);
    throw counter.errored ?? error;
  }
  return { size: counter.bytes, hash: counter.digest() };
}
