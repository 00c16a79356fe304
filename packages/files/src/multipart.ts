import type { Request, Response } from 'express';
import multer from 'multer';
import { ApiError } from '@entity-records/core';
import type { StoredContent } from './declarations';
import { cleanMimeType } from './file-name';
import type { FileService } from './file-service';

type StoredFile = Express.Multer.File & { stored?: StoredContent };

export interface MultipartUpload {
  stored: StoredContent;
  originalName: string;
  fields: Record<string, unknown>;
}

function multerError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: string }).code;
  if (code === 'LIMIT_FILE_SIZE') return new ApiError('FILES_TOO_LARGE', 'The file is larger than the limit');
  if (code === 'LIMIT_UNEXPECTED_FILE' || code === 'LIMIT_FILE_COUNT') {
    return new ApiError('FILES_CONTENT_INVALID', "Send exactly one file, in the form field 'file'");
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ApiError('FILES_CONTENT_INVALID', `The multipart body could not be read: ${message.slice(0, 200)}`);
}

/**
 * Reads a `multipart/form-data` body with one file in the field `file` and a few plain fields
 * (`name`, `id`). The file streams straight into storage, hashed on the way; nothing of it is
 * held in memory.
 */
export function createMultipartReader(files: FileService): (req: Request, res: Response) => Promise<MultipartUpload> {
  const engine: multer.StorageEngine = {
    _handleFile(_req, file, callback) {
      files.store(file.stream, cleanMimeType(file.mimetype)).then(
        (stored) => callback(null, { stored, size: stored.size } as Partial<StoredFile>),
        (error: unknown) => {
          file.stream.resume();
          callback(error as Error);
        },
      );
    },
    _removeFile(_req, file, callback) {
      const stored = (file as StoredFile).stored;
      if (!stored) return callback(null);
      files.discard(stored.storageKey).then(() => callback(null), callback);
    },
  };
  const upload = multer({
    storage: engine,
    preservePath: true, // the name as sent, so that a path in it is refused rather than cut off
    defParamCharset: 'utf8',
    limits: { fileSize: files.options.maxFileSize, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 25, fieldNameSize: 100 },
  }).single('file');

  return (req, res) =>
    new Promise((resolve, reject) => {
      upload(req, res, (error?: unknown) => {
        const file = req.file as StoredFile | undefined;
        if (error) return reject(multerError(error));
        if (!file?.stored) return reject(new ApiError('FILES_CONTENT_REQUIRED', "The multipart body has no file in the field 'file'"));
        resolve({ stored: file.stored, originalName: file.originalname, fields: { ...(req.body as Record<string, unknown>) } });
      });
    });
}
