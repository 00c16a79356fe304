import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import knex from 'knex';
import { childServerScope, ROOT, signIn } from '../support/child-server';
import { TEST_DBS, type TestDatabase } from '../support/databases';
import { filesUnder, killPim, pimDatabase, pimScope, startPim, waitFor, type PimChild } from '../support/pim-child';

/**
 * SIGKILL at the worst moments (CONTRACT §6, §10, §17): during an upsert, a URL import and the
 * joining of a chunked upload. After a restart nothing is half-stored, nothing twice, and the
 * interrupted work completes when sent again. (A job killed mid-way: job-restart.test.ts.)
 */
jest.setTimeout(180_000);

const pim = pimScope('er-sigkill-');
const filesServer = childServerScope(path.join(ROOT, 'test/support/files-server.js'), 'er-sigkill-files-');
const PASSWORD = 'sigkill-password';

/** The files test server on `db`, with a token. */
async function startFiles(db: TestDatabase, { storageDir, env = {} }: { storageDir: string; env?: Record<string, string> }) {
  const server = await filesServer.start({
    env: (port) => ({ PORT: String(port), DATABASE_URL: db.url, STORAGE_DIR: storageDir, ADMIN_PASSWORD: PASSWORD, ...env }),
    listening: (port) => new RegExp(`files server listening on ${port}`),
  });
  const token = ((await (await signIn(server.url, 'admin', PASSWORD)).json()) as { authorizationToken: string }).authorizationToken;
  const call = async (method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${server.url}${pathname}`, { method, headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { ...server, call } as PimChild;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const dataUrl = (bytes: Buffer) => `data:application/octet-stream;base64,${bytes.toString('base64')}`;

describe.each(TEST_DBS)('SIGKILL on %s', (kind) => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await pimDatabase(kind, pim.dir, `sigkill-${Date.now()}`);
  });
  afterEach(() => db.drop());

  it('during an upsert: what is stored is whole and stored once, and the upsert sent again completes it', async () => {
    const storageDir = path.join(pim.dir, `files-upsert-${kind}`);
    const first = await startPim(pim, { db, storageDir });
    const count = 400;
    const items = Array.from({ length: count }, (_, i) => ({ entity: 'Product', payload: { name: `killed ${i}`, sku: `kill-${i}`, quantity: i, brand: { name: `kill brand ${i % 20}` } } }));
    void first.call('POST', '/api/upsert', items).catch(() => undefined);
    await waitFor(async () => (await first.call('GET', '/api/Product?totalOnly=true')).body.total >= 40, { everyMs: 20 });
    await killPim(first);

    const second = await startPim(pim, { db, storageDir });
    const stored: { sku: string; quantity: number; brandId: string | null }[] = [];
    for (let offset = 0; ; offset += 500) {
      const page = (await second.call('GET', `/api/Product?select=sku,quantity,brandId&maxSize=500&offset=${offset}`)).body.list;
      stored.push(...page);
      if (page.length < 500) break;
    }
    expect(stored.length).toBeGreaterThanOrEqual(40);
    expect(stored.length).toBeLessThan(count);
    expect(new Set(stored.map((p) => p.sku)).size).toBe(stored.length);
    for (const p of stored) expect({ sku: p.sku, quantity: p.quantity, linked: p.brandId !== null }).toEqual({ sku: `kill-${p.quantity}`, quantity: p.quantity, linked: true });
    expect((await second.call('GET', '/api/Brand?totalOnly=true')).body.total).toBeLessThanOrEqual(20);

    const again = await second.call('POST', '/api/upsert', items);
    expect(again.status).toBe(200);
    const statuses = again.body.map((r: { status: string }) => r.status);
    expect(statuses.filter((s: string) => s === 'Created')).toHaveLength(count - stored.length);
    expect(statuses.filter((s: string) => s !== 'Created' && s !== 'NotModified')).toEqual([]);
    expect((await second.call('GET', '/api/Product?totalOnly=true')).body.total).toBe(count);
    expect((await second.call('GET', '/api/Brand?totalOnly=true')).body.total).toBe(20);
  });

  it('during a URL import: no File, no contents, no temporary file after the restart', async () => {
    const stalled: http.ServerResponse[] = [];
    const source = http.createServer((req, res) => {
      if (req.url === '/endless') {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(8 * 1024 * 1024) });
        res.write(Buffer.alloc(1024 * 1024, 9));
        stalled.push(res);
      } else res.writeHead(200, { 'Content-Type': 'text/plain' }).end('whole');
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    try {
      const storageDir = path.join(pim.dir, `files-url-${kind}`);
      const first = await startFiles(db, { storageDir });
      const url = (p: string) => `http://127.0.0.1:${(source.address() as AddressInfo).port}${p}`;
      void first.call('POST', '/api/File', { name: 'endless.bin', url: url('/endless') }).catch(() => undefined);
      await waitFor(() => filesUnder(path.join(storageDir, 'tmp')).length > 0);
      await killPim(first);
      expect(filesUnder(path.join(storageDir, 'tmp'))).toHaveLength(1);

      const second = await startFiles(db, { storageDir });
      expect(filesUnder(storageDir)).toEqual([]);
      expect((await second.call('GET', '/api/File?totalOnly=true')).body.total).toBe(0);
      expect((await second.call('POST', '/api/File', { name: 'whole.txt', url: url('/whole') })).body.fileSize).toBe(5);
      expect((await second.call('GET', '/api/File?totalOnly=true')).body.total).toBe(1);
    } finally {
      for (const res of stalled) res.destroy();
      source.closeAllConnections();
      source.close();
    }
  });

  it('while the pieces of a chunked upload are joined: after the restart the last chunk sent again makes the File once', async () => {
    const storageDir = path.join(pim.dir, `files-chunks-${kind}`);
    const first = await startFiles(db, { storageDir, env: { SLOW_CHUNK_READ_MS: '4000' } });
    const file = randomBytes(3000);
    const upload = { id: `joined-${kind}`, fileUniqueHash: `joined-${kind}-${randomBytes(4).toString('hex')}`, name: 'joined.bin', piecesCount: 3 };
    const chunk = (server: PimChild, i: number) => server.call('POST', '/api/File', { ...upload, start: i * 1000, piece: dataUrl(file.subarray(i * 1000, (i + 1) * 1000)) });
    for (const i of [0, 1]) expect((await chunk(first, i)).status).toBe(200);
    void chunk(first, 2).catch(() => undefined);
    // The upload is claimed for joining (its state says so in the database): kill it now.
    const sql = knex(kind === 'postgres' ? { client: 'pg', connection: db.url } : { client: 'better-sqlite3', connection: { filename: db.url.replace(/^sqlite:/, '') }, useNullAsDefault: true });
    try {
      await waitFor(async () => (await sql('file_upload').where({ file_id: upload.id }).first())?.state === 'assembling');
    } finally {
      await sql.destroy();
    }
    await killPim(first);

    // A joining older than the assembly timeout is taken over by the next request for the upload.
    const second = await startFiles(db, { storageDir, env: { ASSEMBLY_TIMEOUT_MINUTES: '0.0001' } });
    const done = await chunk(second, 2);
    expect(done).toEqual({ status: 200, body: { chunks: ['0', '1000', '2000'], id: upload.id, name: 'joined.bin' } });
    expect((await chunk(second, 2)).body).toMatchObject({ id: upload.id });
    const files = (await second.call('GET', '/api/File?select=hash,fileSize')).body;
    expect(files.list).toEqual([expect.objectContaining({ id: upload.id, hash: sha256(file), fileSize: 3000 })]);
    const left = filesUnder(storageDir);
    expect(left.filter((f) => f.startsWith('files/'))).toHaveLength(1);
    expect(left.filter((f) => !f.startsWith('files/'))).toEqual([]);
  });
});
