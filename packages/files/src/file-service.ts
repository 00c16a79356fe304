import type { Readable } from 'node:stream';
import { ApiError, uuidv7, type ApiRecord, type EntityApi, type FieldModel, type PluginApi, type PresentHook, type RequestContext } from '@entity-records/core';
import { newContentKey, writeContent } from './content';
import type { StorageDriver, StoredContent, ThumbnailSize } from './declarations';
import { THUMBNAIL_SIZES } from './declarations';
import { assertFileName } from './file-name';
import { measureImage, type MeasureOptions } from './images';
import type { ResolvedOptions } from './options';

/** A File's contents as stored. */
export interface FileContent {
  storageKey: string;
  size: number;
  hash: string;
  mimeType: string;
  isImage: boolean;
}

/** Contents just written, before images among them are measured. */
export type WrittenContent = Omit<StoredContent, 'width' | 'height'>;

/** As the File's creation answers an id that another File has (one in the bin included). */
export const idTaken = () => new ApiError('CORE_UNIQUE_VIOLATION', 'File with the same id already exists', { details: { entity: 'File', fields: ['id'] } });

/** Keys of a File record that only uploads set. */
export const SERVER_FIELDS = ['mimeType', 'fileSize', 'hash', 'width', 'height', 'downloadUrl', 'thumbnails', 'storageKey'] as const;

/**
 * Stores contents and creates File records for them. A File record is only ever created for
 * contents just stored: the route stores, hands the result over here, and the `beforeCreate`
 * hook fills the record's read-only fields from it.
 */
export class FileService {
  /** Contents waiting for the record about to be created in this request. */
  private readonly pending = new WeakMap<RequestContext, StoredContent>();

  constructor(
    readonly storage: StorageDriver,
    readonly options: ResolvedOptions,
    private readonly instance: () => EntityApi,
  ) {}

  private get base(): string {
    return (this.options.publicUrl ?? this.instance().options.publicUrl ?? '').replace(/\/+$/, '');
  }

  /** The authenticated download link of a file. */
  downloadUrl(id: string): string {
    return `${this.base}/api/File/${encodeURIComponent(id)}/download`;
  }

  /** Thumbnail links, or nulls for files that are not raster images. */
  thumbnailUrls(id: string, isImage: boolean): Record<ThumbnailSize, string | null> {
    const url = (size: ThumbnailSize) => (isImage ? `${this.base}/api/File/${encodeURIComponent(id)}/thumbnail/${size}` : null);
    return { small: url('small'), medium: url('medium'), large: url('large') };
  }

  /**
   * Stores bytes (or a stream) under a new key, measuring images; memory stays flat for streams.
   * `sniff: false` keeps a declared `application/octet-stream` as it is (see `measureImage`).
   */
  async store(source: Readable | Buffer, mimeType: string, { sniff }: Pick<MeasureOptions, 'sniff'> = {}): Promise<StoredContent> {
    const storageKey = newContentKey();
    const { size, hash } = await writeContent({ storage: this.storage, key: storageKey }, source, { maxBytes: this.options.maxFileSize });
    return this.describe({ storageKey, size, hash, mimeType }, { bytes: Buffer.isBuffer(source) ? source : undefined, sniff });
  }

  /** The description of contents already in storage (assembled chunks). */
  async describe({ storageKey, size, hash, mimeType }: WrittenContent, measure: MeasureOptions = {}): Promise<StoredContent> {
    const image = await measureImage({ storage: this.storage, key: storageKey }, mimeType, measure);
    return { storageKey, size, hash, mimeType: image.mimeType, width: image.width, height: image.height };
  }

  /** Removes stored contents and their thumbnails; missing objects are fine. */
  async discard(storageKey: string): Promise<void> {
    await this.storage.delete(storageKey).catch(() => undefined);
    await this.storage.deletePrefix(thumbnailPrefix(storageKey)).catch(() => undefined);
  }

  /**
   * Creates the File record for stored contents with the caller's rights; when that fails the
   * contents are removed again.
   */
  async createRecord(ctx: RequestContext, body: Record<string, unknown>, stored: StoredContent): Promise<ApiRecord> {
    this.pending.set(ctx, stored);
    try {
      return await this.instance().repository('File').create(ctx, body);
    } catch (error) {
      await this.discard(stored.storageKey);
      throw error;
    } finally {
      this.pending.delete(ctx);
    }
  }

  /** The storage key of a File row, or undefined. */
  async storageKeyOf(id: string): Promise<string | undefined> {
    return (await this.contentOf(id))?.storageKey;
  }

  /**
   * What serving a File's contents needs, read past field rights: a caller who may read the record
   * gets its bytes whole and correctly labelled, even without the right to read `fileSize` or `hash`.
   */
  async contentOf(id: string): Promise<FileContent | undefined> {
    const row = await this.instance().repository('File').readStored(id, ['storageKey', 'fileSize', 'hash', 'mimeType', 'width']);
    if (!row?.storageKey) return undefined;
    return {
      storageKey: row.storageKey as string,
      size: Number(row.fileSize),
      hash: row.hash as string,
      mimeType: row.mimeType as string,
      isImage: row.width !== null && row.width !== undefined,
    };
  }

  /**
   * `downloadUrl` and `thumbnails` of every answer, made from the public URL of the moment (so a
   * new `publicUrl` holds for old records too); they are never stored. Images are told by `width`.
   */
  private linksHook(): PresentHook {
    const shows = (fields: readonly FieldModel[], name: string) => fields.some((f) => f.name === name);
    return {
      load: ({ fields }) => (shows(fields, 'thumbnails') ? ['width'] : []),
      present: ({ fields, records }) => {
        const [download, thumbnails] = [shows(fields, 'downloadUrl'), shows(fields, 'thumbnails')];
        if (!download && !thumbnails) return;
        for (const record of records) {
          if (download) record.downloadUrl = this.downloadUrl(record.id);
          if (thumbnails) record.thumbnails = this.thumbnailUrls(record.id, typeof record.width === 'number');
        }
      },
    };
  }

  /** Record hooks: read-only fields come from the upload; names are checked; contents go with the row. */
  installHooks(api: PluginApi): void {
    api.onRecord('beforeCreate', 'File', ({ ctx, data }) => {
      const stored = this.pending.get(ctx);
      this.pending.delete(ctx);
      if (!stored || !data) {
        throw new ApiError('FILES_CONTENT_REQUIRED', 'A File is created by an upload: send fileContents, url or chunks to POST /File, or a multipart body to POST /File/upload');
      }
      assertFileName(data.name);
      // A client's id goes on as sent, so that core refuses one outside the pattern (a number, '').
      const id = data.id === undefined || data.id === null ? uuidv7() : data.id;
      Object.assign(data, {
        id,
        mimeType: stored.mimeType,
        fileSize: stored.size,
        hash: stored.hash,
        width: stored.width,
        height: stored.height,
        storageKey: stored.storageKey,
      });
    });
    api.onPresent('File', this.linksHook());
    api.onRecord('beforeUpdate', 'File', ({ data }) => assertFileName(data?.name));
    // A permanent delete removes the contents; a soft-deleted file keeps them (it can be restored).
    const removing = new WeakMap<RequestContext, Map<string, string>>();
    api.onRecord('beforeDelete', 'File', async ({ ctx, id }) => {
      const key = await this.storageKeyOf(id as string);
      if (!key) return;
      if (!removing.has(ctx)) removing.set(ctx, new Map());
      removing.get(ctx)?.set(id as string, key);
    });
    api.onRecord('afterDelete', 'File', async ({ ctx, id }) => {
      const key = removing.get(ctx)?.get(id as string);
      removing.get(ctx)?.delete(id as string);
      if (key && !(await this.rowExists(id as string))) await this.discard(key);
    });
  }

  /** Whether a File that is not in the bin has this id. */
  async liveRowExists(id: string): Promise<boolean> {
    const row = await this.instance().repository('File').readStored(id, []);
    return row !== undefined && !row.deleted;
  }

  /** Whether a File row has this id, a soft-deleted one included (its id stays taken). */
  async rowExists(id: string): Promise<boolean> {
    return (await this.instance().repository('File').readStored(id, [])) !== undefined;
  }
}

/** Where the thumbnails of some contents are kept. */
export const thumbnailPrefix = (storageKey: string) => `thumbs/${storageKey.replace(/^files\//, '')}/`;
export const thumbnailKey = (storageKey: string, size: ThumbnailSize) => `${thumbnailPrefix(storageKey)}${size}-${THUMBNAIL_SIZES[size]}.png`;
