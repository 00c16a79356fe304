import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ByteRange } from '../byte-range';
import type { StorageDriver } from '../declarations';
import { Temporaries } from './temporaries';

/** Keys the plugin makes: no absolute paths, no `..`, nothing a shell or a file system treats specially. */
const KEY = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*\/?$/;

/**
 * Files in one directory on this machine's disk (or a shared mount, for several processes).
 * Writes go to a temporary file under `tmp/` and are renamed into place, so a reader sees the
 * whole object or none. Closing removes the temporary files of writes still running; starting
 * removes those of processes that died.
 */
export class LocalStorage implements StorageDriver {
  readonly root: string;
  private readonly temporaries: Temporaries;

  constructor(root: string) {
    this.root = path.resolve(root);
    this.temporaries = new Temporaries(path.join(this.root, 'tmp'));
  }

  /** Removes what writes of processes that died (killed, crashed) left behind. */
  async open(): Promise<void> {
    await this.temporaries.removeOrphans();
  }

  /** Ends the writes still running, removing their temporary files. */
  async close(): Promise<void> {
    await this.temporaries.abortAll();
  }

  /** The absolute path of a key, refusing anything that would leave the root. */
  private pathOf(key: string): string {
    if (!KEY.test(key) || key.split('/').includes('..')) throw new Error(`invalid storage key '${key}'`);
    const full = path.join(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`invalid storage key '${key}'`);
    return full;
  }

  localPath(key: string): string {
    return this.pathOf(key);
  }

  async write(key: string, source: Readable | Buffer): Promise<number> {
    const target = this.pathOf(key);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    return this.temporaries.write(source, (temporary) => fs.promises.rename(temporary, target));
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(key);
    // Open first, so a missing object rejects here rather than on the stream.
    const handle = await fs.promises.open(file, 'r');
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await fs.promises.stat(this.pathOf(key))).isFile();
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.pathOf(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`a prefix ends in '/': '${prefix}'`);
    await fs.promises.rm(this.pathOf(prefix), { recursive: true, force: true });
  }
}
