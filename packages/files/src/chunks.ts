import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ApiRecord, RequestContext } from '@entity-records/core';
import { newContentKey, readStored, tooLarge, writeContent } from './content';
import { conflict, contiguous, offsets, overlaps, relation, sha256Of, type Piece } from './chunk-pieces';
import { ChunkStore, type ChunkRow, type UploadRow } from './chunk-store';
import type { ChunkInput } from './chunk-input';
import { mimeTypeOf } from './file-name';
import { idTaken, type FileService } from './file-service';

export interface ChunkAnswer {
  chunks: string[];
  id?: string;
  name?: string;
}

/** An upload this request claimed: its chunks join into the file under `finalKey`. */
interface Assembly {
  upload: UploadRow;
  chunks: ChunkRow[];
  finalKey: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether `upload`, read under the lock, is still the finished upload `seen` before it (no other
 * request started it afresh meanwhile: a finished upload's rows change only when one does).
 */
const sameFinishedUpload = (upload: UploadRow, seen: UploadRow | undefined): boolean =>
  seen !== undefined && upload.state === 'done' && upload.fileId === seen.fileId && upload.touchedAt === seen.touchedAt;

/**
 * Chunked uploads: chunks in any order, concurrently, on any process sharing the database and the
 * storage. Each chunk is stored as its own object; the request whose chunk completes the set
 * claims the upload in the database and streams the pieces, in order, into the file.
 */
export class ChunkService {
  readonly store: ChunkStore;

  constructor(
    private readonly files: FileService,
    instance: ConstructorParameters<typeof ChunkStore>[0],
  ) {
    this.store = new ChunkStore(instance);
  }

  private get options() {
    return this.files.options;
  }

  /** One upload per user and fileUniqueHash: another user's upload with the same hash is another upload. */
  uploadIdOf(ctx: RequestContext, fileUniqueHash: string): string {
    return createHash('sha256').update(`${ctx.user?.id ?? ''}\n${fileUniqueHash}`).digest('hex');
  }

  async receive(ctx: RequestContext, input: ChunkInput): Promise<ChunkAnswer> {
    const size = input.bytes.length;
    if (input.start + size > this.options.maxFileSize) throw tooLarge(this.options.maxFileSize);
    // The piece's hash goes into its row, in the transaction that records it: whatever process
    // a chunk reaches, it is compared with the bytes recorded first at its offset.
    const piece: Piece = { start: input.start, size, hash: createHash('sha256').update(input.bytes).digest('hex') };
    const uploadId = this.uploadIdOf(ctx, input.fileUniqueHash);
    const now = Date.now();
    const description = { uploadId, fileId: input.id, name: input.name, piecesCount: input.piecesCount, touchedAt: now };
    const before = await this.store.upload(uploadId);
    // A finished upload whose File has been deleted since (moved to the bin or removed) names no
    // file any more: its chunks start a new upload, as after the expiry, rather than being
    // answered with the id of a File no one can read.
    const orphaned = before?.state === 'done' && !(await this.files.liveRowExists(before.fileId)) ? before : undefined;
    const live = before && !orphaned && !this.expired(before, now) ? before : undefined;
    if (live) this.assertSameFile(live, input);
    // A file not yet joined whose id another File has (a deleted one too) would fail at its last
    // chunk: say so at once. A File made with that id meanwhile still fails the last chunk.
    if ((!live || live.state === 'open') && (await this.files.rowExists(input.id))) throw idTaken();
    await this.store.ensureUpload(description);

    // Write the bytes first (outside any lock), unless this is plainly a repeat or a conflict.
    const fileKey = async () => (live?.state === 'done' ? this.files.storageKeyOf(live.fileId) : undefined);
    const early = live ? await relation(await this.store.chunks(uploadId), piece, (c) => this.storedHash(c, fileKey)) : 'new';
    if (early === 'overlap') throw overlaps(piece);
    const key = early === 'new' ? `chunks/${uploadId}/${input.start}-${randomBytes(6).toString('hex')}` : undefined;
    // Its hash is known already; the file's is taken once, when the pieces are joined.
    if (key) await writeContent({ storage: this.files.storage, key }, input.bytes, { maxBytes: this.options.maxFileSize, hash: false });

    let obsolete: ChunkRow[] = [];
    let result: { upload: UploadRow; chunks: ChunkRow[]; claimed: string | undefined; keep: boolean };
    try {
      result = await this.store.locked(uploadId, async (trx, upload) => {
        if (!upload) throw conflict('The upload was removed meanwhile; send the chunk again');
        if (this.expired(upload, now) || sameFinishedUpload(upload, orphaned)) {
          obsolete = await this.store.restart(trx, description);
          upload = { ...upload, ...description, state: 'open', claimedAt: null, finalKey: null };
        }
        this.assertSameFile(upload, input);
        let chunks = await this.store.chunks(uploadId, trx);
        // Only storage is read here (the transaction may hold the one connection): a complete
        // file's chunks no longer change, and were compared with the file before the lock.
        const current = await relation(chunks, piece, (c) => this.storedHash(c));
        if (current === 'overlap') throw overlaps(piece);
        let keep = false;
        if (current === 'new') {
          if (upload.state !== 'open' || chunks.length >= upload.piecesCount) throw conflict(`All ${upload.piecesCount} pieces of this file are in already`);
          // Looked like a repeat before the lock, but the upload started afresh meanwhile.
          if (!key) throw conflict('The upload changed while this chunk was received; send it again');
          const added: ChunkRow = { start: input.start, size, storageKey: key, hash: piece.hash };
          if (chunks.length + 1 === upload.piecesCount && !contiguous([...chunks, added])) {
            throw conflict('The pieces would not join into one file: their offsets and sizes leave gaps or overlaps');
          }
          await this.store.addChunk(trx, { uploadId, chunk: added, now });
          chunks = [...chunks, added];
          keep = true;
        }
        const complete = chunks.length === upload.piecesCount && upload.state === 'open';
        const finalKey = complete ? newContentKey() : undefined;
        const claimed = finalKey && (await this.store.claim({ uploadId, finalKey, now }, trx)) ? finalKey : undefined;
        return { upload, chunks, claimed, keep };
      });
    } catch (error) {
      if (key) await this.files.storage.delete(key).catch(() => undefined);
      throw error;
    }
    if (key && !result.keep) await this.files.storage.delete(key).catch(() => undefined);
    await this.removeChunkObjects(obsolete);

    const answer: ChunkAnswer = { chunks: offsets(result.chunks) };
    if (result.claimed) return { ...answer, ...(await this.assemble(ctx, { upload: result.upload, chunks: result.chunks, finalKey: result.claimed })) };
    // Every piece is in: the answer names the file, once it exists.
    if (result.chunks.length === result.upload.piecesCount) return { ...answer, ...(await this.awaitFile(ctx, result.upload, result.chunks)) };
    return answer;
  }

  /**
   * The file of an upload whose pieces are all in, as soon as it exists. While another request
   * (on any process) joins the pieces, this one waits for it; should that one fail, this one
   * joins them, and should its process have died (its claim older than the assembly timeout),
   * this one takes the work over. The wait is thus bounded by the assembly timeout.
   */
  private async awaitFile(ctx: RequestContext, first: UploadRow, chunks: ChunkRow[]): Promise<{ id: string; name: string }> {
    let upload = first;
    for (let pause = 20; ; pause = Math.min(pause * 2, 500)) {
      if (upload.state === 'done') return { id: upload.fileId, name: upload.name };
      if (upload.state === 'open') {
        // The assembly failed and was given back: join the pieces here.
        const finalKey = newContentKey();
        if (await this.store.claim({ uploadId: upload.uploadId, finalKey, now: Date.now() })) {
          // Claimed, the upload takes no more chunks: these are the ones to join.
          const current = await this.store.chunks(upload.uploadId);
          if (current.length !== upload.piecesCount || !contiguous(current)) {
            await this.store.release(upload.uploadId);
            throw conflict('The upload changed while this chunk was received; send it again');
          }
          return this.assemble(ctx, { upload, chunks: current, finalKey });
        }
      } else {
        const taken = await this.takeOverStale(ctx, upload, chunks);
        if (taken) return taken;
      }
      await sleep(pause);
      const next = await this.store.upload(upload.uploadId);
      if (!next || next.fileId !== first.fileId) throw conflict('The upload was removed meanwhile; send the chunk again');
      upload = next;
    }
  }

  /**
   * The hash of a chunk recorded before hashes were kept: from its stored piece, or once the file
   * is complete (`fileKeyOf` finds it), from the file's bytes at its offset; undefined when neither
   * is there.
   */
  private async storedHash(chunk: ChunkRow, fileKeyOf?: () => Promise<string | undefined>): Promise<string | undefined> {
    const storage = this.files.storage;
    try {
      if (chunk.storageKey) return await sha256Of((await storage.read(chunk.storageKey)) as AsyncIterable<Buffer>);
      const fileKey = chunk.size > 0 ? await fileKeyOf?.() : undefined;
      if (!fileKey) return undefined;
      const range = { start: chunk.start, end: chunk.start + chunk.size - 1 };
      return await sha256Of((await readStored({ storage, key: fileKey }, range)) as AsyncIterable<Buffer>);
    } catch {
      return undefined;
    }
  }

  private expired(upload: UploadRow, now: number): boolean {
    return upload.state !== 'assembling' && upload.touchedAt < now - this.options.chunkExpiryMs;
  }

  private assertSameFile(upload: UploadRow, input: ChunkInput): void {
    for (const [field, stored, sent] of [
      ['id', upload.fileId, input.id],
      ['name', upload.name, input.name],
      ['piecesCount', upload.piecesCount, input.piecesCount],
    ] as const) {
      if (stored !== sent) throw conflict(`This fileUniqueHash belongs to an upload with another ${field}`, { field });
    }
  }

  /** An assembly whose process died long ago (claim older than the timeout) is done again here. */
  private async takeOverStale(ctx: RequestContext, upload: UploadRow, chunks: ChunkRow[]): Promise<{ id: string; name: string } | undefined> {
    const now = Date.now();
    const staleBefore = now - this.options.assemblyTimeoutMs;
    if (upload.claimedAt === null || upload.claimedAt >= staleBefore) return undefined;
    // The record may exist already: the process died after creating it.
    if (upload.finalKey && (await this.recordHolds(upload.fileId, upload.finalKey))) {
      await this.store.complete(upload.uploadId, now);
      await this.removeChunkObjects(chunks);
      return { id: upload.fileId, name: upload.name };
    }
    const finalKey = newContentKey();
    if (!(await this.store.claim({ uploadId: upload.uploadId, finalKey, now, staleBefore }))) return undefined;
    if (upload.finalKey) await this.files.discard(upload.finalKey);
    return this.assemble(ctx, { upload, chunks, finalKey });
  }

  private async recordHolds(fileId: string, key: string): Promise<boolean> {
    return (await this.files.storageKeyOf(fileId)) === key;
  }

  /** Streams the pieces in order into the file, hashing on the way, and creates the File record. */
  private async assemble(ctx: RequestContext, { upload, chunks, finalKey }: Assembly): Promise<{ id: string; name: string }> {
    let record: ApiRecord;
    try {
      const ordered = [...chunks].sort((a, b) => a.start - b.start);
      const storage = this.files.storage;
      const joined = Readable.from(
        (async function* () {
          for (const c of ordered) {
            if (!c.storageKey) throw new Error(`chunk ${c.start} of upload ${upload.uploadId} has no stored bytes`);
            yield* (await storage.read(c.storageKey)) as AsyncIterable<Buffer>;
          }
        })(),
        { objectMode: false },
      );
      const { size, hash } = await writeContent({ storage, key: finalKey }, joined, { maxBytes: this.options.maxFileSize });
      const stored = await this.files.describe({ storageKey: finalKey, size, hash, mimeType: mimeTypeOf(upload.name) });
      record = await this.files.createRecord(ctx, { id: upload.fileId, name: upload.name }, stored);
    } catch (error) {
      await this.files.discard(finalKey);
      await this.store.release(upload.uploadId);
      throw error;
    }
    await this.store.complete(upload.uploadId, Date.now());
    await this.removeChunkObjects(chunks);
    return { id: record.id, name: record.name as string };
  }

  private async removeChunkObjects(chunks: readonly ChunkRow[]): Promise<void> {
    for (const c of chunks) if (c.storageKey) await this.files.storage.delete(c.storageKey).catch(() => undefined);
  }

  /** Removes uploads untouched for longer than the expiry, with their objects. */
  async removeExpired(): Promise<number> {
    const taken = await this.store.takeExpired(Date.now() - this.options.chunkExpiryMs);
    for (const { upload, chunks } of taken) {
      await this.removeChunkObjects(chunks);
      await this.files.storage.deletePrefix(`chunks/${upload.uploadId}/`).catch(() => undefined);
      if (upload.state !== 'done' && upload.finalKey && !(await this.recordHolds(upload.fileId, upload.finalKey))) {
        await this.files.discard(upload.finalKey);
      }
    }
    return taken.length;
  }
}
