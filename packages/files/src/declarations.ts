import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { ByteRange } from './byte-range';

/**
 * Where file contents live. Keys are made by the plugin (`files/…`, `chunks/…`, `thumbs/…`,
 * letters, digits, `/`, `-`, `_` and `.`), never from a client's file name. The local directory
 * driver is the default; an S3-compatible object store implements the same methods (a key is an
 * object name, `deletePrefix` lists and deletes, `write` is a single or multipart PUT).
 */
export interface StorageDriver {
  /**
   * Stores the bytes of `source` under `key`, replacing what was there. Readers never see a
   * partly written object. Resolves with the number of bytes written.
   */
  write(key: string, source: Readable | Buffer): Promise<number>;
  /**
   * A stream of the bytes stored under `key` (only bytes `range.start` to `range.end`, both
   * included, when a range is given); rejects with `code: 'ENOENT'` when there are none.
   */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Whether `key` holds an object. */
  exists(key: string): Promise<boolean>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Removes every object whose key starts with `prefix` (which ends in `/`). */
  deletePrefix(prefix: string): Promise<void>;
  /** A path on this machine's disk holding the object, when the driver keeps one (images are read from it). */
  localPath?(key: string): string | undefined;
  /** Called when the instance starts: a driver may clean up what a process that died left (partial writes). */
  open?(): Promise<void>;
  /**
   * Releases connections or handles; called when the instance closes, after the requests in
   * flight had their grace period: writes still running are ended and leave nothing behind.
   */
  close?(): Promise<void>;
}

/** Options of `@entity-records/files`. */
export interface FilesOptions {
  /** Where contents are stored; default a `LocalStorage` in `storageDir`. */
  storage?: StorageDriver;
  /** Directory of the default local storage; default `data/files` under the working directory. */
  storageDir?: string;
  /** Base of `downloadUrl` and thumbnail links, read for each answer; default the instance's `publicUrl` (else links start at `/api`). */
  publicUrl?: string;
  /** Largest file in bytes, by any upload method; default 2 GiB. */
  maxFileSize?: number;
  /** Host names the URL method may fetch from although they resolve to a private or loopback address; default none. */
  fileUrlAllowedHosts?: readonly string[];
  /** Time limit of a URL download (connect to last byte, redirects included) in ms; default 30000. */
  urlTimeoutMs?: number;
  /** URL imports that download at once (each holds a connection, a storage write and up to `urlTimeoutMs`); default 4. */
  maxConcurrentUrlImports?: number;
  /** URL imports that may wait for a place; any more are 503 `CORE_BUSY`. Default 64. */
  urlImportQueue?: number;
  /** Redirects a URL download follows; default 3. */
  urlMaxRedirects?: number;
  /** Name resolution of the URL method (tests stub it); default `dns.lookup`. */
  urlLookup?: LookupFunction;
  /** Hours after its last chunk that an incomplete chunked upload is removed; default 24. */
  chunkExpiryHours?: number;
  /** Largest `piecesCount` of a chunked upload; default 100000. */
  maxPiecesCount?: number;
  /** Minutes after which an assembly that never finished (its process died) may be taken over; default 10. */
  assemblyTimeoutMinutes?: number;
  /** Largest image (bytes) read into memory for a thumbnail when the storage has no local path; default 64 MiB. */
  maxThumbnailSourceSize?: number;
}

/** The sizes of thumbnails, in pixels of the longer side. */
export const THUMBNAIL_SIZES = { small: 128, medium: 256, large: 1024 } as const;
export type ThumbnailSize = keyof typeof THUMBNAIL_SIZES;

/** A File record as the API shows it. */
export interface FileRecord {
  id: string;
  name: string;
  mimeType: string;
  fileSize: number;
  hash: string;
  width: number | null;
  height: number | null;
  downloadUrl: string;
  thumbnails: Record<ThumbnailSize, string | null>;
  createdAt: string;
  modifiedAt: string;
  createdById: string | null;
  modifiedById: string | null;
}

/** Contents written to storage, before (or without) a File record. */
export interface StoredContent {
  storageKey: string;
  size: number;
  /** sha256, hex. */
  hash: string;
  mimeType: string;
  width: number | null;
  height: number | null;
}
