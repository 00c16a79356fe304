import path from 'node:path';
import type { LookupFunction } from 'node:net';
import { allowedHostSet } from '@entity-records/core';
import type { FilesOptions } from './declarations';

const GiB = 1024 ** 3;

/** The options with every default filled in. */
export interface ResolvedOptions {
  storageDir: string;
  publicUrl?: string;
  maxFileSize: number;
  fileUrlAllowedHosts: ReadonlySet<string>;
  urlTimeoutMs: number;
  urlMaxRedirects: number;
  maxConcurrentUrlImports: number;
  urlImportQueue: number;
  urlLookup?: LookupFunction;
  chunkExpiryMs: number;
  maxPiecesCount: number;
  assemblyTimeoutMs: number;
  maxThumbnailSourceSize: number;
}

export function resolveOptions(options: FilesOptions = {}): ResolvedOptions {
  return {
    storageDir: path.resolve(options.storageDir ?? path.join('data', 'files')),
    publicUrl: options.publicUrl,
    maxFileSize: options.maxFileSize ?? 2 * GiB,
    fileUrlAllowedHosts: allowedHostSet(options.fileUrlAllowedHosts),
    urlTimeoutMs: options.urlTimeoutMs ?? 30_000,
    urlMaxRedirects: options.urlMaxRedirects ?? 3,
    maxConcurrentUrlImports: options.maxConcurrentUrlImports ?? 4,
    urlImportQueue: options.urlImportQueue ?? 64,
    urlLookup: options.urlLookup,
    chunkExpiryMs: (options.chunkExpiryHours ?? 24) * 3_600_000,
    maxPiecesCount: options.maxPiecesCount ?? 100_000,
    assemblyTimeoutMs: (options.assemblyTimeoutMinutes ?? 10) * 60_000,
    maxThumbnailSourceSize: options.maxThumbnailSourceSize ?? 64 * 1024 ** 2,
  };
}
