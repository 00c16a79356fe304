import sharp from 'sharp';
import type { Readable } from 'node:stream';
import type { StorageLocation } from './content';
import type { ThumbnailSize } from './declarations';
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
async function sharpInput({ storage, key }: StorageLocation, limit: number, whole: boolean): Promise<string | Buffer | undefined> {
  const local = storage.localPath?.(key);
  if (local) return local;
  return readAtMost(await storage.read(key), limit, whole);
}

/** How contents are measured: their bytes when at hand, and whether an undeclared type is sniffed. */
export interface MeasureOptions {
  bytes?: Buffer;
  /**
   * Whether contents typed `application/octet-stream` (chunks of a name without a known
   * extension, a URL or part sent so) are looked at too, and get the type found; default true.
   * Without it only contents declared `image/…` are measured.
   */
  sniff?: boolean;
}

/** Width, height and media type of a raster image, or nulls for anything else (including broken images). */
export async function measureImage(
  image: StorageLocation,
  mimeType: string,
  { bytes, sniff = true }: MeasureOptions = {},
): Promise<{ width: number | null; height: number | null; mimeType: string }> {
  const none = { width: null, height: null, mimeType };
  if (!mimeType.startsWith('image/') && !(sniff && mimeType === 'application/octet-stream')) return none;
  try {
    const input = bytes ?? (await sharpInput(image, HEADER_BYTES, false));
    if (!input) return none;
    const meta = await sharp(input, { failOn: 'none' }).metadata();
    if (!meta.format || !RASTER_FORMATS.has(meta.format) || !meta.width || !meta.height) return none;
    const found = mimeType === 'application/octet-stream' ? `image/${meta.format}` : mimeType;
    // EXIF orientations 5-8 turn the picture on its side.
    const turned = (meta.orientation ?? 1) >= 5;
    return { mimeType: found, ...(turned ? { width: meta.height, height: meta.width } : { width: meta.width, height: meta.height }) };
  } catch {
    return none;
  }
}

/** A PNG thumbnail whose longer side is the size's pixels (smaller images are not enlarged). */
export async function makeThumbnail(image: StorageLocation, size: ThumbnailSize, maxSourceBytes: number): Promise<Buffer | undefined> {
  const input = await sharpInput(image, maxSourceBytes, true);
  if (!input) return undefined;
  const px = THUMBNAIL_SIZES[size];
  return sharp(input, { failOn: 'none' }).rotate().resize(px, px, { fit: 'inside', withoutEnlargement: true }).png().toBuffer();
}
