/**
 * What both floors (bare-server.ts for the PIM example, simple-floor.ts for the simple schema)
 * share: a pool of 10 `pg` connections with our type parsers, SQL capture for the bench, the token
 * check (the same rule as our server's), JSON bodies and answers, ids and times as ours makes them.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { TOKEN_BY_HASH, TOUCH_TOKEN, USER_BY_ID, USER_ROLES } from './bare-sql';
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
export const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: 10, types: types as never });

const capture = new QueryCapture();
export type Runner = { query: (config: pg.QueryConfig) => Promise<pg.QueryResult> };
export type Row = Record<string, unknown>;

/** A name per statement text: each connection parses and plans a statement once, as ours does. */
const names = new Map<string, string>();
const nameOf = (sql: string): string => {
  let name = names.get(sql);
  if (!name) names.set(sql, (name = `floor_${names.size}`));
  return name;
};

/** Runs one statement as a named prepared statement, recorded while the bench captures. */
export async function query<T = Row>(runner: Runner, sql: string, bindings: unknown[] = []): Promise<T[]> {
  capture.record(sql, bindings);
  return (await runner.query({ name: nameOf(sql), text: sql, values: bindings })).rows as T[];
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

// --- token check: one cached lookup, same rules as ours (5 s trust, touch at most once a minute)

export interface Session {
  userId: string;
  tokenId: string;
  expiresAt: number | null;
  idleMs: number | null;
  lastUsedAt: number;
  checkedAt: number;
}
const sessions = new Map<string, Session>();

export async function authenticate(token: string | undefined): Promise<Session> {
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

// --- values as ours makes them ------------------------------------------------------------------

const pad = (n: number) => String(n).padStart(2, '0');
/** The current time as ours stores it: UTC, whole seconds. */
export const now = (d = new Date()) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

let lastMs = 0;
let sequence = 0;
/** UUIDv7 as our server makes them (written again here: the floor loads no code of ours, so that its memory and CPU are its own). */
export function uuidv7(): string {
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

/** Whether `id` can be a record id (ours answers 404 for others without asking the database). */
export const isId = (id: string) => /^[A-Za-z0-9_-]{1,64}$/.test(id);

/**
 * Checks the fields of a Product body the bench sends: no unknown key, a name, types. Each floor
 * names the keys its schema has.
 */
export function checkProductBody(body: Row, allowed: readonly string[]): void {
  const check = (key: string, ok: (v: unknown) => boolean) => {
    if (body[key] !== undefined && body[key] !== null && !ok(body[key])) throw new HttpError(400, 'CORE_VALIDATION_FAILED', `${key} is invalid`);
  };
  const str = (v: unknown) => typeof v === 'string' && v.length <= 255;
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw new HttpError(400, 'CORE_VALIDATION_FAILED', `unknown ${key}`);
  }
  if (typeof body.name !== 'string' || body.name === '') throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'name is required');
  check('name', str), check('sku', str), check('brandId', str);
  check('price', (v) => typeof v === 'number' && Number.isFinite(v));
  check('quantity', (v) => Number.isSafeInteger(v));
}

// --- HTTP ---------------------------------------------------------------------------------------

/** The JSON body of a request: `array` says whether a list or an object is expected. */
export function readBody<T = Row>(req: http.IncomingMessage, array = false): Promise<T> {
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
    return Promise.reject(new HttpError(415, 'CORE_UNSUPPORTED_MEDIA_TYPE', 'JSON only'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('end', () => {
      try {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (!body || typeof body !== 'object' || Array.isArray(body) !== array) throw new Error('not the expected shape');
        resolve(body as T);
      } catch {
        reject(new HttpError(400, 'CORE_INVALID_JSON', 'The body is not valid JSON'));
      }
    });
  });
}

export function send(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** A request as the floors route it: method, path, query string, the caller's session. */
export interface FloorRequest {
  req: http.IncomingMessage;
  method: string;
  pathname: string;
  params: URLSearchParams;
  session: Session;
}

/**
 * Serves `route` on a free loopback port for the bench: the token is checked first, `route`
 * answers a value (sent as JSON, 200) or throws an HttpError.
 */
export function serveFloor(route: (r: FloorRequest) => Promise<unknown>): void {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const request = async () => {
      const session = await authenticate(req.headers['authorization-token'] as string | undefined);
      const pathname = at < 0 ? url : url.slice(0, at);
      return route({ req, method: req.method ?? 'GET', pathname, params: new URLSearchParams(at < 0 ? '' : url.slice(at + 1)), session });
    };
    request().then(
      (value) => send(res, 200, value),
      (error: unknown) => {
        if (error instanceof HttpError) return send(res, error.status, { code: error.code, message: error.message });
        console.error(error);
        send(res, 500, { code: 'CORE_INTERNAL', message: 'Internal error' });
      },
    );
  });
  serveHttpToBench(server, capture, () => pool.end()).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
