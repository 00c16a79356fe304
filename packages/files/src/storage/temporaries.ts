import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '@entity-records/core';

/** A temporary file of another host is left alone for this long (that host may still write it). */
const FOREIGN_EXPIRY_MS = 24 * 3_600_000;

/** This host's name as it appears in file names. */
const HOST = os.hostname().replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64) || 'host';

/** `<pid>.<host>.<random>.part`: whose process wrote it. */
const NAME = /^(\d+)\.([A-Za-z0-9-]+)\.[0-9a-f]+\.part$/;

/** The temporary files being written by this process, whichever storage writes them. */
const WRITING = new Set<string>();

/** Whether a process of this host runs under `pid` (one of another user counts as running). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The temporary files of a storage directory: each write goes to one, named after the process
 * writing it, until it is renamed into place. Those of writes still running when the process
 * stops are removed by `abortAll`; those of a process that died, by `removeOrphans` at the next
 * start.
 */
export class Temporaries {
  private readonly active = new Map<string, fs.WriteStream>();

  constructor(private readonly dir: string) {}

  /**
   * Streams `source` into a new temporary file and hands its path to `place`; removes it on
   * failure. Resolves with the number of bytes written.
   */
  async write(source: Readable | Buffer, place: (temporary: string) => Promise<void>): Promise<number> {
    await fs.promises.mkdir(this.dir, { recursive: true });
    const temporary = path.join(this.dir, `${process.pid}.${HOST}.${randomBytes(8).toString('hex')}.part`);
    const out = fs.createWriteStream(temporary, { flags: 'wx' });
    this.active.set(temporary, out);
    WRITING.add(temporary);
    try {
      // Counted from here on: a reader attached earlier, across an await, would lose the bytes.
      let bytes = 0;
      const input = (Buffer.isBuffer(source) ? Readable.from([source]) : source).on('data', (b: Buffer) => (bytes += b.length));
      await pipeline(input, out);
      await place(temporary);
      return bytes;
    } catch (error) {
      await fs.promises.rm(temporary, { force: true });
      throw error;
    } finally {
      this.active.delete(temporary);
      WRITING.delete(temporary);
    }
  }

  /** Fails every write still running and removes its temporary file. */
  async abortAll(): Promise<void> {
    const aborted = [...this.active];
    // The request still writing gets 503 (if its client still listens): it may send the file again.
    for (const [, out] of aborted) out.destroy(new ApiError('CORE_SHUTTING_DOWN', 'The server stopped while the file was being stored; send it again'));
    await Promise.all(aborted.map(([temporary]) => fs.promises.rm(temporary, { force: true })));
  }

  /**
   * Removes temporary files no running write owns: this host's whose process is gone (or is an
   * earlier process that had this one's pid), and any older than a day.
   */
  async removeOrphans(): Promise<number> {
    let names: string[];
    try {
      names = await fs.promises.readdir(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      const file = path.join(this.dir, name);
      if (WRITING.has(file) || !(await this.orphaned(name, file))) continue;
      await fs.promises.rm(file, { force: true });
      removed += 1;
    }
    return removed;
  }

  private async orphaned(name: string, file: string): Promise<boolean> {
    const match = NAME.exec(name);
    if (match && match[2] === HOST) {
      const pid = Number(match[1]);
      if (pid === process.pid || !running(pid)) return true;
    }
    const stat = await fs.promises.stat(file).catch(() => undefined);
    return stat !== undefined && Date.now() - stat.mtimeMs > FOREIGN_EXPIRY_MS;
  }
}
