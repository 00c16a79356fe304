import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, ROOT, signIn, startChildServer, type ChildServer } from '../support/child-server';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../support/databases';

/**
 * Chunked uploads and share counters with two server processes on one database (PostgreSQL, or
 * one SQLite file) and one storage directory (DESIGN.md, scaling past one machine).
 */
const SERVER = path.join(ROOT, 'examples/pim/dist/server.js');
const PASSWORD = 'two-servers-password';
jest.setTimeout(180_000);

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(TEST_DBS)('two servers on one %s database', (kind) => {
  let db: TestDatabase;
  let storage: string;
  let servers: ChildServer[] = [];
  let token: string;

  const call = async (server: ChildServer, method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${server.url}${pathname}`, {
      method,
      headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    ensureBuilt(SERVER);
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'er-two-'));
    fs.mkdirSync(path.join(storage, 'files'));
    db = kind === 'postgres' ? await createTestDatabase(kind) : { kind, url: `sqlite:${path.join(storage, 'db.sqlite')}`, drop: async () => undefined };
    const start = () =>
      startChildServer({
        script: SERVER,
        env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: db.url, STORAGE_DIR: path.join(storage, 'files'), ADMIN_PASSWORD: PASSWORD }),
        listening: (port) => new RegExp(`PIM example listening on http://127\\.0\\.0\\.1:${port} `),
      });
    servers = [await start(), await start()];
    expect(servers.map((s) => s.url)).toHaveLength(2);
    token = ((await (await signIn(servers[0].url, 'admin', PASSWORD)).json()) as { authorizationToken: string }).authorizationToken;
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await db?.drop();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  const pieces = (file: Buffer, size: number) => {
    const out: { start: number; piece: string }[] = [];
    for (let start = 0; start < file.length; start += size) {
      out.push({ start, piece: `data:application/octet-stream;base64,${file.subarray(start, start + size).toString('base64')}` });
    }
    return out;
  };

  it('assembles a file whose chunks arrive at once on both processes, exactly once', async () => {
    const file = randomBytes(16 * 65536 + 123);
    const parts = pieces(file, 65536);
    const common = { id: 'both-servers', name: 'both.bin', fileUniqueHash: 'both-hash', piecesCount: parts.length };
    const answers = await Promise.all(parts.map((p, i) => call(servers[i % 2], 'POST', i % 3 ? '/api/File' : '/api/v1/File/createChunk', { ...common, ...p })));
    expect(answers.map((a) => a.status)).toEqual(parts.map(() => 200));
    const complete = answers.filter((a) => a.body.id);
    expect(complete).toHaveLength(1);
    expect(complete[0].body).toEqual({ chunks: parts.map((p) => String(p.start)), id: 'both-servers', name: 'both.bin' });
    const record = await call(servers[1], 'GET', '/api/File/both-servers');
    expect(record.body).toMatchObject({ fileSize: file.length, hash: sha256(file) });
    const download = await fetch(`${servers[1].url}/api/File/both-servers/download`, { headers: { 'Authorization-Token': token } });
    expect(Buffer.compare(Buffer.from(await download.arrayBuffer()), file)).toBe(0);
  });

  it('lets exactly one of two last chunks arriving at once on two processes complete the file', async () => {
    for (let round = 0; round < 6; round++) {
      const file = randomBytes(6 * 4096);
      const parts = pieces(file, 4096);
      const common = { id: `race-${round}`, name: `race-${round}.bin`, fileUniqueHash: `race-hash-${round}`, piecesCount: parts.length };
      for (const p of parts.slice(0, -2)) expect((await call(servers[0], 'POST', '/api/File', { ...common, ...p })).status).toBe(200);
      const last = await Promise.all(parts.slice(-2).map((p, i) => call(servers[i], 'POST', '/api/File', { ...common, ...p })));
      expect(last.map((a) => a.status)).toEqual([200, 200]);
      expect(last.filter((a) => a.body.id === common.id)).toHaveLength(1);
      const listed = await call(servers[round % 2], 'GET', `/api/File?totalOnly=true&where[0][type]=equals&where[0][attribute]=id&where[0][value]=${common.id}`);
      expect(listed.body.total).toBe(1);
      expect((await call(servers[0], 'GET', `/api/File/${common.id}`)).body.hash).toBe(sha256(file));
    }
    // no piece is left behind once the files exist
    const left = fs.readdirSync(path.join(storage, 'files', 'chunks'), { recursive: true }).filter((f) => !fs.statSync(path.join(storage, 'files', 'chunks', String(f))).isDirectory());
    expect(left).toEqual([]);
  });

  it('counts sharing downloads on both processes exactly, never past allowedUsage', async () => {
    const file = await call(servers[0], 'POST', '/api/File', { name: 'shared.txt', fileContents: `data:text/plain;base64,${Buffer.from('shared').toString('base64')}` });
    const limited = await call(servers[0], 'POST', '/api/Sharing', { fileId: file.body.id, allowedUsage: 17 });
    const open = await call(servers[1], 'POST', '/api/v1/Sharing', { fileId: file.body.id });
    const fetchLink = (server: ChildServer, link: string) => fetch(`${server.url}${new URL(link).pathname}`).then(async (r) => (await r.arrayBuffer(), r.status));
    const limitedStatuses = await Promise.all(Array.from({ length: 30 }, (_, i) => fetchLink(servers[i % 2], limited.body.link)));
    expect(limitedStatuses.filter((s) => s === 200)).toHaveLength(17);
    expect(limitedStatuses.filter((s) => s === 410)).toHaveLength(13);
    const openStatuses = await Promise.all(Array.from({ length: 24 }, (_, i) => fetchLink(servers[i % 2], open.body.link)));
    expect(openStatuses).toEqual(Array(24).fill(200));
    expect((await call(servers[1], 'GET', `/api/Sharing/${limited.body.id}`)).body).toMatchObject({ used: 17, available: false });
    expect((await call(servers[0], 'GET', `/api/Sharing/${open.body.id}`)).body).toMatchObject({ used: 24, available: true });
  });
});
