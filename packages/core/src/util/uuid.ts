import { createHash, randomBytes } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

/** Random bytes are drawn in blocks: one system call per 256 ids rather than per id. */
const POOL_SIZE = 16 * 256;
let pool = Buffer.alloc(0);
let offset = POOL_SIZE;

/** The offset of 16 fresh random bytes in `pool` (valid until the next call). */
function random16(): number {
  if (offset + 16 > pool.length) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  offset += 16;
  return offset - 16;
}

/** The 16 bytes of the id being made: one buffer reused, as ids are made one at a time. */
const bytes = Buffer.alloc(16);

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter that keeps ids made in
 * the same millisecond in creation order, then random bits. Ids sort by creation time within a
 * process.
 */
export function uuidv7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    sequence += 1;
    if (sequence > 0xfff) {
      ms = lastMs + 1;
      sequence = 0;
    }
  } else {
    const at = random16(); // before reading `pool`, which it may replace
    sequence = pool.readUInt16BE(at) & 0x3ff;
  }
  lastMs = ms;
  const at = random16();
  pool.copy(bytes, 0, at, at + 16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A UUIDv7 that is the same every time for one `seed` (a UUIDv7 itself) and `index` (below 2^32):
 * the seed's milliseconds, then the index (so the ids of one seed sort by index), then bits of a
 * hash of both. The ids a job gives the records its items create: a job that runs again knows
 * which records its first run created.
 */
export function derivedUuidv7(seed: string, index: number): string {
  const out = createHash('sha256').update(`${seed}:${index}`).digest().subarray(0, 16);
  Buffer.from(seed.replace(/-/g, '').slice(0, 12), 'hex').copy(out, 0);
  const n = index >>> 0;
  out[6] = 0x70 | ((n >>> 28) & 0x0f);
  out[7] = (n >>> 20) & 0xff;
  out[8] = 0x80 | ((n >>> 14) & 0x3f);
  out[9] = (n >>> 6) & 0xff;
  out[10] = ((n & 0x3f) << 2) | (out[10] & 0x03);
  const hex = out.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
