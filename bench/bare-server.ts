/**
 * The floor: a bare `node:http` + `pg` server that answers the bench's requests with the same
 * SQL text and bindings our server sends (list.ts checks this before measuring) and the same JSON.
 * It does only what the answer needs: one cached token check, hand-written SQL, JSON.stringify.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import {
  BRAND_EXISTS,
  CATEGORIES,
  COUNT_PRICE_ABOVE,
  GET_PRODUCT,
  INSERT_CHANGE,
  INSERT_PRODUCT,
  LIST_PLAIN,
  LIST_PRICE_ABOVE,
  LIST_WITH_BRAND,
  STORED_PRICE,
  TAGS,
  TOKEN_BY_HASH,
  TOUCH_TOKEN,
  UPDATE_PRICE,
  USER_BY_ID,
  USER_ROLES,
} from './bare-sql';
import { QueryCapture, serveHttpToBench } from './child-ipc';

/** The same type parsers as our server: date/time stay text, int8 and numeric become numbers. */
const RAW_TEXT_OIDS = new Set([1082, 1114, 1184]);
const NUMBER_OIDS = new Set([20, 1700]);
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (RAW_TEXT_OIDS.has(oid)) return (value: string) => value;
    if (NUMBER_OIDS.has(oid)) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};
const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: 10, types: types as never });

const capture = new QueryCapture();
type Runner = { query: (text: string, values?: unknown[]) => Promise<pg.QueryResult> };
async function query<T>(runner: Runner, sql: string, bindings: unknown[] = []): Promise<T[]> {
  capture.record(sql, bindings);
  return (await runner.query(sql, bindings)).rows as T[];
}

// --- token check: one cached lookup, same rules as ours (5 s trust, touch at most once a minute)

interface Session {
  userId: string;
  tokenId: string;
  expiresAt: number | null;
  idleMs: number | null;
  lastUsedAt: number;
  checkedAt: number;
}
const sessions = new Map<string, Session>();

class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

async function authenticate(token: string | undefined): Promise<Session> {
  if (!token) throw new HttpError(401, 'CORE_UNAUTHORIZED', 'Authentication required');
  const hash = createHash('sha256').update(token).digest('hex');
  const now = Date.now();
  let s = sessions.get(hash);
  if (!s || now - s.checkedAt > 5000) {
    sessions.delete(hash);
    const [t] = await query<Record<string, string | null>>(pool, TOKEN_BY_HASH, [hash, 1]);
    if (!t) throw new HttpError(401, 'CORE_UNAUTHORIZED', 'Invalid or revoked token');
    const [u] = await query<{ isActive: boolean | null }>(pool, USER_BY_ID, [false, t.userId, 1]);
    if (!u || u.isActive === false) throw new HttpError(401, 'CORE_UNAUTHORIZED', 'Invalid or revoked token');
    await query(pool, USER_ROLES, [t.userId, false]);
    const num = (v: unknown) => (v === null ? null : Number(v));
    s = { userId: t.userId as string, tokenId: t.id as string, expiresAt: num(t.expiresAt), idleMs: num(t.idleMs), lastUsedAt: Number(t.lastUsedAt), checkedAt: now };
    sessions.set(hash, s);
  }
  if ((s.expiresAt !== null && now >= s.expiresAt) || (s.idleMs !== null && now - s.lastUsedAt >= s.idleMs)) {
    sessions.delete(hash);
    throw new HttpError(401, 'CORE_UNAUTHORIZED', 'Token expired');
  }
  if (now - s.lastUsedAt >= Math.min(60_000, s.idleMs ?? 60_000)) {
    s.lastUsedAt = now;
    await query(pool, TOUCH_TOKEN, [now, s.tokenId]);
  }
  return s;
}

// --- records ------------------------------------------------------------------------------------

type Row = Record<string, unknown>;

type Linked = Map<string, { ids: string[]; names: Record<string, unknown> }>;

/** The ids and names of a multiple link of the rows, by row id (one query). */
async function links(ids: string[], sql: (n: number) => string): Promise<Linked> {
  const byOwner: Linked = new Map(ids.map((id) => [id, { ids: [], names: {} }]));
  const [{ l }] = await query<{ l: string | null }>(pool, sql(ids.length), [...ids, false]);
  for (const [o, id, n] of (l ? JSON.parse(l) : []) as [string, string, unknown][]) {
    const e = byOwner.get(o);
    if (e) (e.ids.push(id), (e.names[id] = n));
  }
  return byOwner;
}

/** Adds `categoriesIds/Names` and `tagsIds/Names` (one query each) and orders keys as ours does. */
async function shape(rows: Row[]): Promise<Row[]> {
  if (rows.length === 0) return rows;
  const ids = rows.map((r) => r.id as string);
  const categories = await links(ids, CATEGORIES);
  const tags = await links(ids, TAGS);
  return rows.map((r) => {
    const c = categories.get(r.id as string)!;
    const t = tags.get(r.id as string)!;
    return {
      id: r.id, name: r.name, sku: r.sku, mpn: r.mpn, description: r.description, price: r.price, quantity: r.quantity,
      isActive: r.isActive, releaseDate: r.releaseDate, brandId: r.brandId, brandName: r.brandName,
      categoriesIds: c.ids, categoriesNames: c.names, statusId: r.statusId, statusName: r.statusName,
      tagsIds: t.ids, tagsNames: t.names, mainImageId: r.mainImageId, mainImageName: r.mainImageName, createdAt: r.createdAt, modifiedAt: r.modifiedAt,
      createdById: r.createdById, createdByName: r.createdByName, modifiedById: r.modifiedById, modifiedByName: r.modifiedByName,
      [VERSION]: r.__version,
    };
  });
}

/** Where a record keeps its version, for the `ETag` of the answer (not a key of its JSON). */
const VERSION = Symbol('version');

/** The `deleted = false` bindings of the product select: five joined tables and the product. */
const NOT_DELETED = [false, false, false, false, false, false];

async function getProduct(id: string): Promise<Row | undefined> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined;
  return (await shape(await query<Row>(pool, GET_PRODUCT, [...NOT_DELETED, id])))[0];
}

async function listProducts(params: URLSearchParams): Promise<unknown> {
  const select = params.get('select');
  const maxSize = Number(params.get('maxSize') ?? 200);
  if (!Number.isInteger(maxSize) || maxSize < 0 || maxSize > 1000) throw new HttpError(400, 'CORE_INVALID_QUERY', 'bad maxSize');
  if (select === 'name,sku,price,brandName' && params.get('collectionOnly') === 'true') {
    const rows = await query<Row>(pool, LIST_WITH_BRAND, [false, false, maxSize]);
    return { list: rows.map((r) => ({ id: r.id, name: r.name, sku: r.sku, price: r.price, brandId: r.brandId, brandName: r.brandName })) };
  }
  if (select === 'name,sku,price' && params.get('collectionOnly') === 'true') {
    const rows = await query<Row>(pool, LIST_PLAIN, [false, maxSize]);
    return { list: rows.map((r) => ({ id: r.id, name: r.name, sku: r.sku, price: r.price })) };
  }
  if (select === 'name,sku,price,brandName,categoriesNames' && params.get('collectionOnly') === 'true') {
    const rows = await query<Row>(pool, LIST_WITH_BRAND, [false, false, maxSize]);
    const categories = rows.length ? await links(rows.map((r) => r.id as string), CATEGORIES) : new Map();
    return {
      list: rows.map((r) => {
        const c = categories.get(r.id as string)!;
        return { id: r.id, name: r.name, sku: r.sku, price: r.price, brandId: r.brandId, brandName: r.brandName, categoriesIds: c.ids, categoriesNames: c.names };
      }),
    };
  }
  if (params.get('where[0][type]') === 'greaterThan' && params.get('where[0][attribute]') === 'price' && params.get('sortBy') === 'price') {
    const above = Number(params.get('where[0][value]'));
    if (!Number.isFinite(above)) throw new HttpError(400, 'CORE_INVALID_QUERY', 'bad value');
    const [{ total }] = await query<{ total: number }>(pool, COUNT_PRICE_ABOVE, [false, above]);
    if (total === 0 || maxSize === 0) return { total, list: [] };
    return { total, list: await shape(await query<Row>(pool, LIST_PRICE_ABOVE, [...NOT_DELETED, above, maxSize])) };
  }
  throw new HttpError(400, 'CORE_INVALID_QUERY', 'The floor serves only the bench requests');
}

const pad = (n: number) => String(n).padStart(2, '0');
const now = (d = new Date()) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

let lastMs = 0;
let sequence = 0;
/** UUIDv7 as our server makes them. */
function uuidv7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    if (++sequence > 0xfff) (ms = lastMs + 1), (sequence = 0);
  } else sequence = randomBytes(2).readUInt16BE(0) & 0x3ff;
  lastMs = ms;
  const b = randomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (sequence >> 8);
  b[7] = sequence & 0xff;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Checks the body the bench sends (types, required name, no unknown key), inserts, reads back. */
async function createProduct(body: Row, userId: string, requestId: string): Promise<Row> {
  const check = (key: string, ok: (v: unknown) => boolean) => {
    if (body[key] !== undefined && body[key] !== null && !ok(body[key])) throw new HttpError(400, 'CORE_VALIDATION_FAILED', `${key} is invalid`);
  };
  const str = (v: unknown) => typeof v === 'string' && v.length <= 255;
  for (const key of Object.keys(body)) {
    if (!['name', 'sku', 'price', 'quantity', 'brandId'].includes(key)) throw new HttpError(400, 'CORE_VALIDATION_FAILED', `unknown ${key}`);
  }
  if (typeof body.name !== 'string' || body.name === '') throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'name is required');
  check('name', str), check('sku', str), check('brandId', str);
  check('price', (v) => typeof v === 'number' && Number.isFinite(v));
  check('quantity', (v) => Number.isSafeInteger(v));
  const id = uuidv7();
  const at = now();
  const client = await pool.connect();
  try {
    await query(client, 'BEGIN;');
    if (body.brandId != null && (await query(client, BRAND_EXISTS, [body.brandId, false])).length === 0) {
      throw new HttpError(400, 'CORE_INVALID_LINK', `Brand '${String(body.brandId)}' not found`);
    }
    const values = [body.brandId ?? null, at, null, userId, id, true, at, null, userId, body.name, body.price ?? null, body.quantity ?? null, body.sku ?? null];
    await query(client, INSERT_PRODUCT, values);
    const diff = Object.fromEntries(['name', 'sku', 'price', 'quantity', 'brandId'].filter((k) => body[k] != null).map((k) => [k, { was: null, became: body[k] }]));
    await query(client, INSERT_CHANGE, ['Create', null, null, at, JSON.stringify({ ...diff, isActive: { was: null, became: true } }), 'Product', null, id, requestId, userId]);
    await query(client, 'COMMIT;');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw (error as { code?: string }).code === '23505' ? new HttpError(409, 'CORE_UNIQUE_VIOLATION', 'duplicate') : error;
  } finally {
    client.release();
  }
  return (await getProduct(id)) as Row;
}

/**
 * Checks the body the bench sends (a price, nothing else) and updates the product when the price
 * changes: an update that changes nothing answers the record as it is, modifiedAt included.
 */
async function updateProduct(id: string, body: Row, userId: string, requestId: string): Promise<Row | undefined> {
  const [key, ...others] = Object.keys(body);
  if (key !== 'price' || others.length) throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'The floor updates the price only');
  if (typeof body.price !== 'number' || !Number.isFinite(body.price)) throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'price is invalid');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) return undefined;
  const [stored] = await query<Row>(pool, STORED_PRICE, [false, id]);
  if (!stored) return undefined;
  if (stored.price !== body.price) {
    const at = now();
    const diff = JSON.stringify({ price: { was: stored.price, became: body.price } });
    await query(pool, UPDATE_PRICE, [at, null, userId, body.price, id, false, 'Product', id, 'Update', diff, userId, null, requestId, null, null, at]);
  }
  return getProduct(id);
}

// --- HTTP ---------------------------------------------------------------------------------------

function readBody(req: http.IncomingMessage): Promise<Row> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('end', () => {
      try {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
        resolve(body as Row);
      } catch {
        reject(new HttpError(400, 'CORE_INVALID_JSON', 'The body is not valid JSON'));
      }
    });
  });
}

function send(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  const version = (value as { [VERSION]?: unknown } | undefined)?.[VERSION];
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), ...(version !== undefined && { ETag: `"${String(version)}"` }) });
  res.end(body);
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const at = url.indexOf('?');
  const pathname = at < 0 ? url : url.slice(0, at);
  const session = await authenticate(req.headers['authorization-token'] as string | undefined);
  if (req.method === 'GET' && pathname === '/api/Product') return send(res, 200, await listProducts(new URLSearchParams(at < 0 ? '' : url.slice(at + 1))));
  if (req.method === 'GET' && pathname.startsWith('/api/Product/')) {
    const record = await getProduct(decodeURIComponent(pathname.slice('/api/Product/'.length)));
    if (!record) throw new HttpError(404, 'CORE_NOT_FOUND', 'Product not found');
    return send(res, 200, record);
  }
  if (req.method === 'POST' && pathname === '/api/Product') {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) throw new HttpError(415, 'CORE_UNSUPPORTED_MEDIA_TYPE', 'JSON only');
    return send(res, 200, await createProduct(await readBody(req), session.userId, randomUUID()));
  }
  if (req.method === 'PATCH' && pathname.startsWith('/api/Product/')) {
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) throw new HttpError(415, 'CORE_UNSUPPORTED_MEDIA_TYPE', 'JSON only');
    const record = await updateProduct(decodeURIComponent(pathname.slice('/api/Product/'.length)), await readBody(req), session.userId, randomUUID());
    if (!record) throw new HttpError(404, 'CORE_NOT_FOUND', 'Product not found');
    return send(res, 200, record);
  }
  throw new HttpError(404, 'CORE_ROUTE_NOT_FOUND', `No route ${req.method} ${pathname}`);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    if (error instanceof HttpError) return send(res, error.status, { code: error.code, message: error.message });
    console.error(error);
    send(res, 500, { code: 'CORE_INTERNAL', message: 'Internal error' });
  });
});

serveHttpToBench(server, capture, () => pool.end()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
