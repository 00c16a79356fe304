import type { AuxiliaryTable, EntityApi } from '@entity-records/core';

/** Uploads in progress, one row per (user, fileUniqueHash); times in Unix ms. */
export const UPLOAD_TABLES: AuxiliaryTable[] = [
  {
    name: 'file_upload',
    columns: {
      upload_id: 'varchar(64) not null',
      file_id: 'varchar(64) not null',
      name: 'varchar(255) not null',
      pieces_count: 'integer not null',
      touched_at: 'bigint not null',
      state: 'varchar(16) not null',
      claimed_at: 'bigint',
      final_key: 'varchar(255)',
    },
    primaryKey: ['upload_id'],
    indexes: [{ name: 'ix_file_upload_touched', columns: ['touched_at'] }],
  },
  {
    name: 'file_upload_chunk',
    columns: {
      upload_id: 'varchar(64) not null',
      start_at: 'bigint not null',
      size: 'bigint not null',
      storage_key: 'varchar(255)',
      // sha256 of the piece, hex: tells a repeated chunk from other bytes at the same offset.
      // Null in rows written before it was kept.
      piece_hash: 'varchar(64)',
    },
    primaryKey: ['upload_id', 'start_at'],
  },
];

export type UploadState = 'open' | 'assembling' | 'done';

export interface UploadRow {
  uploadId: string;
  fileId: string;
  name: string;
  piecesCount: number;
  touchedAt: number;
  state: UploadState;
  claimedAt: number | null;
  finalKey: string | null;
}

export interface ChunkRow {
  start: number;
  size: number;
  storageKey: string | null;
  /** sha256 of the piece, hex; null for a chunk recorded before hashes were kept. */
  hash: string | null;
}

/** A request's claim on assembling an upload. */
export interface AssemblyClaim {
  uploadId: string;
  /** The key the joined file is written under. */
  finalKey: string;
  now: number;
  /** Also takes over an assembly claimed before this time: its process died. */
  staleBefore?: number;
}

type Knex = EntityApi['database']['knex'];
type Trx = Parameters<Parameters<Knex['transaction']>[0]>[0];

const toUpload = (r: Record<string, unknown>): UploadRow => ({
  uploadId: r.upload_id as string,
  fileId: r.file_id as string,
  name: r.name as string,
  piecesCount: Number(r.pieces_count),
  touchedAt: Number(r.touched_at),
  state: r.state as UploadState,
  claimedAt: r.claimed_at === null || r.claimed_at === undefined ? null : Number(r.claimed_at),
  finalKey: (r.final_key as string | null) ?? null,
});

const toChunk = (r: Record<string, unknown>): ChunkRow => ({
  start: Number(r.start_at),
  size: Number(r.size),
  storageKey: (r.storage_key as string | null) ?? null,
  hash: (r.piece_hash as string | null) ?? null,
});

/**
 * The SQL of chunked uploads. Every process on one database shares it: the upload row is locked
 * while a chunk is recorded, so concurrent chunks see each other and exactly one request claims
 * the assembly.
 */
export class ChunkStore {
  constructor(private readonly instance: () => EntityApi) {}

  private get knex(): Knex {
    return this.instance().database.knex;
  }

  /**
   * Runs `fn` in a transaction holding the upload's row lock. The lock is taken by writing the row
   * first: PostgreSQL locks it, and SQLite takes its write lock at the start (waiting for other
   * processes as long as its busy timeout allows) instead of failing to upgrade a read later.
   */
  async locked<TResult>(uploadId: string, fn: (trx: Trx, upload: UploadRow | undefined) => Promise<TResult>): Promise<TResult> {
    return this.knex.transaction(async (trx) => {
      await trx('file_upload').where({ upload_id: uploadId }).update({ upload_id: uploadId });
      const row = await trx('file_upload').where({ upload_id: uploadId }).first();
      return fn(trx, row ? toUpload(row) : undefined);
    });
  }

  async upload(uploadId: string): Promise<UploadRow | undefined> {
    const row = await this.knex('file_upload').where({ upload_id: uploadId }).first();
    return row ? toUpload(row) : undefined;
  }

  async chunks(uploadId: string, trx?: Trx): Promise<ChunkRow[]> {
    const rows = await (trx ?? this.knex)('file_upload_chunk').where({ upload_id: uploadId }).orderBy('start_at');
    return rows.map(toChunk);
  }

  /** Creates the upload row if it does not exist yet (another process may create it first). */
  async ensureUpload(row: Omit<UploadRow, 'claimedAt' | 'finalKey' | 'state'>): Promise<void> {
    await this.knex('file_upload')
      .insert({ upload_id: row.uploadId, file_id: row.fileId, name: row.name, pieces_count: row.piecesCount, touched_at: row.touchedAt, state: 'open' })
      .onConflict('upload_id')
      .ignore();
  }

  /** Starts an expired upload afresh with this chunk's description; returns the old chunks to remove. */
  async restart(trx: Trx, row: Omit<UploadRow, 'claimedAt' | 'finalKey' | 'state'>): Promise<ChunkRow[]> {
    const old = await this.chunks(row.uploadId, trx);
    await trx('file_upload_chunk').where({ upload_id: row.uploadId }).delete();
    await trx('file_upload')
      .where({ upload_id: row.uploadId })
      .update({ file_id: row.fileId, name: row.name, pieces_count: row.piecesCount, touched_at: row.touchedAt, state: 'open', claimed_at: null, final_key: null });
    return old;
  }

  async addChunk(trx: Trx, { uploadId, chunk, now }: { uploadId: string; chunk: ChunkRow; now: number }): Promise<void> {
    await trx('file_upload_chunk').insert({ upload_id: uploadId, start_at: chunk.start, size: chunk.size, storage_key: chunk.storageKey, piece_hash: chunk.hash });
    await trx('file_upload').where({ upload_id: uploadId }).update({ touched_at: now });
  }

  /** Marks the upload as being assembled by this request; false when someone else holds it. */
  async claim({ uploadId, finalKey, now, staleBefore }: AssemblyClaim, trx?: Trx): Promise<boolean> {
    const query = (trx ?? this.knex)('file_upload').where({ upload_id: uploadId });
    if (staleBefore === undefined) query.andWhere({ state: 'open' });
    else query.andWhere((w) => void w.where({ state: 'open' }).orWhere((s) => void s.where({ state: 'assembling' }).andWhere('claimed_at', '<', staleBefore)));
    const count = await query.update({ state: 'assembling', claimed_at: now, final_key: finalKey });
    return count === 1;
  }

  /** Gives a failed assembly back, so that the next chunk request may try again. */
  async release(uploadId: string): Promise<void> {
    await this.knex('file_upload').where({ upload_id: uploadId, state: 'assembling' }).update({ state: 'open', claimed_at: null, final_key: null });
  }

  /** The file exists: the chunks' objects are no longer needed (their rows stay for repeated chunks). */
  async complete(uploadId: string, now: number): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx('file_upload').where({ upload_id: uploadId }).update({ state: 'done', touched_at: now });
      await trx('file_upload_chunk').where({ upload_id: uploadId }).update({ storage_key: null });
    });
  }

  /** Uploads untouched since `before`, removed here; the caller removes their objects. */
  async takeExpired(before: number, limit = 100): Promise<{ upload: UploadRow; chunks: ChunkRow[] }[]> {
    const rows = await this.knex('file_upload').where('touched_at', '<', before).limit(limit);
    const taken: { upload: UploadRow; chunks: ChunkRow[] }[] = [];
    for (const row of rows.map(toUpload)) {
      const got = await this.locked(row.uploadId, async (trx, current) => {
        if (!current || current.touchedAt >= before) return undefined;
        const chunks = await this.chunks(row.uploadId, trx);
        await trx('file_upload_chunk').where({ upload_id: row.uploadId }).delete();
        await trx('file_upload').where({ upload_id: row.uploadId }).delete();
        return { upload: current, chunks };
      });
      if (got) taken.push(got);
    }
    return taken;
  }
}
