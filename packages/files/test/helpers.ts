import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EntityApiOptions, PluginEntry } from '@entity-records/core';
import files, { type FilesOptions } from '@entity-records/files';
import { startTestApi, type TestApi } from '../../../test/support/api';

export interface FilesTestApi extends TestApi {
  storageDir: string;
}

/** An instance with the files plugin on a fresh database and a fresh storage directory. */
export async function startFilesApi(
  kind: 'sqlite' | 'postgres',
  options: FilesOptions = {},
  more: Partial<Omit<EntityApiOptions, 'database'>> & { plugins?: PluginEntry[] } = {},
): Promise<FilesTestApi> {
  const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-files-'));
  const t = await startTestApi(kind, {
    entities: [],
    publicUrl: 'http://files.test',
    ...more,
    plugins: [[files, { storageDir, ...options }], ...(more.plugins ?? [])],
  });
  return {
    ...t,
    storageDir,
    async close() {
      await t.close();
      fs.rmSync(storageDir, { recursive: true, force: true });
    },
  };
}

/** `data:<mime>;base64,<bytes>` */
export const dataUrl = (bytes: Buffer | string, mime = 'application/octet-stream') =>
  `data:${mime};base64,${Buffer.from(bytes).toString('base64')}`;

/** Every file under a directory, relative paths. */
export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
}

/** A PNG of the given size, made with sharp. */
export async function pngOf(width: number, height: number): Promise<Buffer> {
  const sharp = (await import('sharp')).default;
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer();
}

/** Binary response bodies as Buffers (supertest parses only text types by default). */
export function binary(response: unknown, callback: (error: Error | null, body: Buffer) => void): void {
  // supertest hands a parser the Node response stream (its types name a plainer shape).
  const res = response as NodeJS.ReadableStream;
  const parts: Buffer[] = [];
  res.on('data', (c: Buffer) => parts.push(c));
  res.on('end', () => callback(null, Buffer.concat(parts)));
  res.on('error', (e: Error) => callback(e, Buffer.alloc(0)));
}

/** A multipart/form-data body built by hand, so that a file name reaches the server exactly as given. */
export function multipartBody(parts: { name: string; filename?: string; type?: string; value: Buffer | string }[]): { body: Buffer; contentType: string } {
  const boundary = `----er${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename.replace(/"/g, '%22')}"`}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`;
    chunks.push(Buffer.from(head, 'utf8'), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
