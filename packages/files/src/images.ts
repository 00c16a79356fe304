import sharp from 'sharp';
import type { Readable } from 'node:stream';
import type { StorageDriver, ThumbnailSize } from './declarations';
import { THUMBNAIL_SIZES } from './declarations';

/** Raster formats we measure and make thumbnails of. SVG is left out: rendering it may load other resources. */
const RASTER_FORMATS = new Set(['jpeg', 'png', 'gif', 'webp', 'avif', 'tiff', 'heif']);

/** Bytes read for measuring an image when the storage has no local path (headers sit at the start). */
const HEADER_BYTES = 512 * 1024;

/** The first `limit` bytes of a stream, or (`whole`) undefined when the stream is longer. */
async function readAtMost(stream: Readable, limit: number, whole: boolean): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    parts.push(chunk);
    size += chunk.length;
    if (size > limit) break;
  }
  stream.destroy();
  if (size > limit && whole) return undefined;
  return Buffer.concat(parts).subarray(0, limit);
}

/** What sharp reads: the file on disk when there is one, else its bytes (`whole`) or its first bytes. */
async function sharpInput(storage: StorageDriver, key: string, limit: number, whole: boolean): Promise<string | Buffer | undefined> {
  const local = storage.localPath?.(key);
  if (local) return local;
  return readAtMost(await storage.read(key), limit, whole);
}

/** Width and height of a raster image, or nulls for anything else (including broken images). */
export async function measureImage(
  storage: StorageDriver,
  key: string,
  mimeType: string,
  bytes?: Buffer,
): Promise<{ width: number | null; height: number | null }> {
  const none = { width: null, height: null };
  if (!mimeType.startsWith('image/')) return none;
  try {
    const input = bytes ?? (await sharpInput(storage, key, HEADER_BYTES, false));
    if (!input) return none;
    const meta = await sharp(input, { failOn: 'none' }).metadata();
    if (!meta.format || !RASTER_FORMATS.has(meta.format) || !meta.width || !meta.height) return none;
    // EXIF orientations 5-8 turn the picture on its side.
    const turned = (meta.orientation ?? 1) >= 5;
    return turned ? { width: meta.height, height: meta.width } : { width: meta.width, height: meta.height };
  } catch {
    return none;
  }
}

/** A PNG thumbnail whose longer side is the size's pixels (smaller images are not enlarged). */
export async function makeThumbnail(storage: StorageDriver, key: string, size: ThumbnailSize, maxSourceBytes: number): Promise<Buffer | undefined> {
  const input = await sharpInput(storage, key, maxSourceBytes, true);
  if (!input) return undefined;
  const px = THUMBNAIL_SIZES[size];
  return sharp(input, { failOn: 'none' }).rotate().resize(px, px, { fit: 'inside', withoutEnlargement: true }).png().toBuffer();
}
