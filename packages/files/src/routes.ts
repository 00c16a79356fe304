import type { Request, Response, Router } from 'express';
import { ApiError, claimIdempotency, ConcurrencyLimit, idempotencyKeyOf, idempotent, objectBody, requestContext, sendRecord, toHandler, type ApiRecord, type EntityApi, type RequestContext } from '@entity-records/core';
import { decodeDataUrl } from './base64';
import { holdsContents, requestedRange } from './byte-range';
import { assertClientId, parseChunk } from './chunk-input';
import type { ChunkService } from './chunks';
import { readStored } from './content';
import { THUMBNAIL_SIZES, type StoredContent, type ThumbnailSize } from './declarations';
import { assertFileName, mimeTypeOf } from './file-name';
import { idTaken, SERVER_FIELDS, thumbnailKey, type FileService } from './file-service';
import { createMultipartReader, type MultipartUpload } from './multipart';
import { sendContent } from './send-content';
import { makeThumbnail } from './images';
import { fetchUrl, parseFileUrl } from './url-fetch';

const CHUNK_KEYS = ['piece', 'fileUniqueHash', 'piecesCount', 'start'];
const CONTENT_KEYS = ['fileContents', 'url', ...CHUNK_KEYS];

const METHODS = { fileContents: ['fileContents'], url: ['url'], chunk: CHUNK_KEYS } as const;

/**
 * A body carries one upload method: `fileContents`, `url`, or a chunk. One that mixes them is
 * 400 `FILES_CONTENT_INVALID`, its issues naming each key of the methods besides `taken` (the
 * one the route reads), so that nothing of a body is silently ignored.
 */
function assertOneMethod(body: Record<string, unknown>, taken: keyof typeof METHODS): void {
  const others = Object.entries(METHODS).filter(([method]) => method !== taken).flatMap(([, keys]) => keys.filter((key) => body[key] !== undefined));
  if (others.length === 0) return;
  const message = 'Send one upload method: fileContents, url, or a chunk (piece, fileUniqueHash, start, piecesCount), not several';
  throw new ApiError('FILES_CONTENT_INVALID', message, {
    details: { issues: others.map((key) => ({ path: [key], code: 'conflict', message: `${key} belongs to another upload method than ${taken}` })) },
  });
}

/** The JSON body as an object; another JSON value (an array), or none, is 400 with an issue at `[]`. */
const bodyObject = (req: Request): Record<string, unknown> => objectBody(req.body ?? null);

/** The record fields of an upload body: what is left without the content keys; read-only ones refused. */
function recordFields(body: Record<string, unknown>): Record<string, unknown> {
  const fields = Object.fromEntries(Object.entries(body).filter(([k]) => !CONTENT_KEYS.includes(k)));
  for (const key of SERVER_FIELDS) {
    if (fields[key] !== undefined && fields[key] !== null) {
      throw new ApiError('CORE_READ_ONLY_FIELD', `${key} is read-only: the upload sets it`, {
        details: { issues: [{ path: [key], code: 'read_only', message: `${key} is read-only` }] },
      });
    }
    delete fields[key];
  }
  assertFileName(fields.name);
  return fields;
}

/**
 * A URL download that broke off, or that the size limit stopped, stores nothing and is 400
 * `FILES_URL_FETCH_FAILED` (a source that announces a size over the limit is refused before, 413).
 */
function cutShort(error: unknown, limits: { timeoutMs: number; maxFileSize: number }): ApiError {
  if (error instanceof ApiError && error.code === 'FILES_TOO_LARGE') {
    return new ApiError('FILES_URL_FETCH_FAILED', `The download from url was cut short at the size limit of ${limits.maxFileSize} bytes`, {
      details: { maxFileSize: limits.maxFileSize },
    });
  }
  if (error instanceof ApiError) return error;
  return new ApiError('FILES_URL_FETCH_FAILED', `The download from url broke off or took longer than ${limits.timeoutMs} ms`);
}

/** Downloads a client-given URL into storage, within the time and size limits. */
async function importUrl(files: FileService, url: URL): Promise<StoredContent> {
  const o = files.options;
  const fetched = await fetchUrl(url, { allowedHosts: o.fileUrlAllowedHosts, timeoutMs: o.urlTimeoutMs, maxRedirects: o.urlMaxRedirects, maxBytes: o.maxFileSize, lookup: o.urlLookup });
  try {
    return await files.store(fetched.body, fetched.mimeType);
  } catch (error) {
    throw cutShort(error, { timeoutMs: o.urlTimeoutMs, maxFileSize: o.maxFileSize });
  } finally {
    fetched.abort();
  }
}

/**
 * What a multipart upload is, for `Idempotency-Key`: its plain fields and its file (name, declared
 * type, size and sha256), not the bytes of the body (whose boundary differs with every send).
 */
const uploadParts = (upload: MultipartUpload) => ({
  fields: upload.fields,
  file: { name: upload.originalName, mimeType: upload.stored.mimeType, size: upload.stored.size, hash: upload.stored.hash },
});

export interface FileRoutesParts {
  files: FileService;
  chunks: ChunkService;
  instance: () => EntityApi;
}

/** `POST /File` (base64, URL, chunk), `/File/createChunk`, `/File/upload`, downloads and thumbnails. */
export function fileRoutes(parts: FileRoutesParts): (router: Router) => void {
  const { files, chunks, instance } = parts;
  const repository = () => instance().repository('File');
  const mayCreate = (ctx: RequestContext) => repository().assertAllowed(ctx, 'create');
  const readMultipart = createMultipartReader(files);
  const urlImports = new ConcurrencyLimit({
    concurrency: files.options.maxConcurrentUrlImports,
    queue: files.options.urlImportQueue,
    busy: () => new ApiError('CORE_BUSY', 'Too many URL imports at once; try again shortly'),
  });

  /**
   * The record a JSON upload is to make, judged before its contents are stored or fetched: the
   * shape and types of its fields, `name` present, a well-formed `id` that no File has. A body the
   * create would refuse never makes the server download a URL.
   */
  const assertCreatable = async (fields: Record<string, unknown>): Promise<void> => {
    repository().validate(fields, 'create');
    if (fields.id === undefined || fields.id === null) return;
    assertClientId(fields.id);
    if (await files.rowExists(fields.id)) throw idTaken();
  };

  const createFromJson = async (ctx: RequestContext, body: Record<string, unknown>): Promise<ApiRecord> => {
    assertOneMethod(body, body.fileContents !== undefined ? 'fileContents' : 'url');
    const fields = recordFields(body);
    await mayCreate(ctx);
    if (body.fileContents !== undefined) {
      // The data URL's type is recorded as given: only contents declared an image are measured.
      const { mimeType, bytes } = decodeDataUrl(body.fileContents, 'fileContents');
      await assertCreatable(fields);
      return files.createRecord(ctx, fields, await files.store(bytes, mimeType, { sniff: false }));
    }
    if (body.url !== undefined) {
      const url = parseFileUrl(body.url);
      await assertCreatable(fields);
      return files.createRecord(ctx, fields, await urlImports.run(() => importUrl(files, url)));
    }
    throw new ApiError('FILES_CONTENT_REQUIRED', 'Send the contents: fileContents (base64 data URL), url, or a chunk (piece, fileUniqueHash, start, piecesCount)');
  };

  const receiveChunk = async (ctx: RequestContext, body: Record<string, unknown>) => {
    assertOneMethod(body, 'chunk');
    const input = parseChunk(body, files.options.maxPiecesCount);
    // The File is made at the last chunk from `id` and `name`: anything else a chunk names is
    // refused at once, as the other methods refuse it (read-only or unknown field).
    repository().validate(recordFields(body), 'create');
    await mayCreate(ctx);
    return chunks.receive(ctx, input);
  };

  const download = async (req: Request, res: Response) => {
    const ctx = requestContext(req);
    const record = await repository().get(ctx, req.params.id as string);
    const content = await files.contentOf(record.id);
    if (!content) throw new ApiError('CORE_NOT_FOUND', `File '${record.id}' not found`);
    const { size, mimeType } = content;
    const etag = `"${content.hash}"`;
    if (holdsContents(res, etag)) {
      // The client's copy is current: the headers a 200 would carry for caches, no bytes.
      res.status(304).set({ ETag: etag, 'Cache-Control': 'private, no-cache' }).end();
      return;
    }
    const range = requestedRange(res, size, etag);
    const stream = await readStored({ storage: files.storage, key: content.storageKey }, range);
    await sendContent(res, { stream, name: String(record.name ?? record.id), mimeType, size, etag, range, disposition: 'attachment' });
  };

  const inflight = new Map<string, Promise<Buffer | undefined>>();
  const thumbnail = async (req: Request, res: Response) => {
    const size = req.params.size as ThumbnailSize;
    if (!Object.hasOwn(THUMBNAIL_SIZES, size)) throw new ApiError('FILES_NO_THUMBNAIL', 'Thumbnail sizes are small, medium and large');
    const record = await repository().get(requestContext(req), req.params.id as string);
    const content = await files.contentOf(record.id);
    if (!content?.isImage) throw new ApiError('FILES_NO_THUMBNAIL', `File '${record.id}' is not a raster image and has no thumbnails`);
    const key = content.storageKey;
    const target = thumbnailKey(key, size);
    if (!(await files.storage.exists(target))) {
      // One rendering per thumbnail in this process; another process may render it too (same bytes).
      let job = inflight.get(target);
      if (!job) {
        job = makeThumbnail({ storage: files.storage, key }, size, files.options.maxThumbnailSourceSize)
          .then(async (png) => (png && (await files.storage.write(target, png)), png))
          .finally(() => inflight.delete(target));
        inflight.set(target, job);
      }
      if (!(await job.catch(() => undefined))) throw new ApiError('FILES_NO_THUMBNAIL', `No thumbnail can be made of File '${record.id}'`);
    }
    const base = String(record.name ?? record.id).replace(/\.[^.]*$/, '');
    await sendContent(res, { stream: await readStored({ storage: files.storage, key: target }), name: `${base}-${size}.png`, mimeType: 'image/png', disposition: 'inline' });
  };

  return (router) => {
    router.post('/File', idempotent, toHandler(async (req, res) => {
      const ctx = requestContext(req);
      const body = bodyObject(req);
      const chunked = CHUNK_KEYS.some((k) => body[k] !== undefined);
      sendRecord(res, chunked ? await receiveChunk(ctx, body) : await createFromJson(ctx, body));
    }));
    router.post('/File/createChunk', idempotent, toHandler(async (req, res) => sendRecord(res, await receiveChunk(requestContext(req), bodyObject(req)))));
    router.post('/File/upload', toHandler(async (req, res) => {
      if (!req.is('multipart/form-data')) throw new ApiError('CORE_UNSUPPORTED_MEDIA_TYPE', "POST /File/upload takes a multipart/form-data body with the file in the field 'file'");
      const ctx = requestContext(req);
      idempotencyKeyOf(req); // a malformed key is 400 before the body is read
      await mayCreate(ctx);
      const upload = await readMultipart(req, res);
      // The key is claimed once the parts are known; a replay (or a refusal) keeps nothing of this body.
      const replayed = await claimIdempotency(req, res, uploadParts(upload)).catch(async (error: unknown) => {
        await files.discard(upload.stored.storageKey);
        throw error;
      });
      if (replayed) return files.discard(upload.stored.storageKey);
      const fields = { ...upload.fields, name: upload.fields.name ?? upload.originalName };
      // A part sent as application/octet-stream (curl's default) gets the type its name says.
      const declared = upload.stored.mimeType;
      const stored = declared === 'application/octet-stream' ? { ...upload.stored, mimeType: mimeTypeOf(String(fields.name)) } : upload.stored;
      try {
        sendRecord(res, await files.createRecord(ctx, recordFields(fields), stored));
      } catch (error) {
        await files.discard(upload.stored.storageKey);
        throw error;
      }
    }));
    router.get('/File/:id/download', toHandler(download));
    router.get('/File/:id/thumbnail/:size', toHandler(thumbnail));
  };
}
