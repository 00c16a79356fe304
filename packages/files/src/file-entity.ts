import { defineEntity } from '@entity-records/core';

/**
 * A stored file. Everything but `name` is set by the upload (read-only); `storageKey` locates the
 * contents in the storage driver and is never shown.
 */
export const FileEntity = defineEntity({
  name: 'File',
  description:
    'Uploaded files. Create one with POST /File (base64 `fileContents`, a `url`, or chunks), or multipart at POST /File/upload; read the contents at /File/{id}/download.',
  fields: {
    name: { type: 'varchar', required: true, maxLength: 255, description: 'The file name, extension included; no path separators.' },
    mimeType: { type: 'varchar', readOnly: true, maxLength: 255 },
    fileSize: { type: 'float', readOnly: true, description: 'Size in bytes (a whole number).' },
    hash: { type: 'varchar', readOnly: true, maxLength: 64, description: 'SHA-256 of the contents, hex.' },
    width: { type: 'int', readOnly: true, description: 'Pixels, for raster images; otherwise null.' },
    height: { type: 'int', readOnly: true, description: 'Pixels, for raster images; otherwise null.' },
    downloadUrl: { type: 'text', computed: true, description: 'GET it with a token to download the contents.' },
    thumbnails: {
      type: 'jsonObject',
      computed: true,
      description: 'URLs of PNG thumbnails `{small, medium, large}` (128, 256, 1024 px), made on first request; each null for files that are not raster images.',
    },
    storageKey: { type: 'varchar', readOnly: true, writeOnly: true, maxLength: 255 },
  },
});
