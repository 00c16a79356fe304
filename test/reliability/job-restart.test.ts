import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../support/databases';

jest.setTimeout(180_000);
const SERVER = path.join(__dirname, '..', 'support', 'job-server.js');
const PASSWORD = 'restart-pass-1';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

async function startServer(url: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), ADMIN_PASSWORD: PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('ready')) resolve();
    });
    child.stderr?.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return child;
}

const stop = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });

describe.each(TEST_DBS)('a job survives a killed server on %s', (kind) => {
  let db: TestDatabase;
  let dir: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-restart-'));
    db = kind === 'sqlite' ? { kind, url: `sqlite:${path.join(dir, 'db.sqlite')}`, drop: async () => undefined } : await createTestDatabase(kind);
  });
  afterAll(async () => {
    for (const c of children) await stop(c, 'SIGKILL');
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('completes after SIGKILL and restart, storing every item once', async () => {
    const port = await freePort();
    const first = await startServer(db.url, port);
    children.push(first);
    const base = `http://127.0.0.1:${port}`;
    const token = (await request(base).get('/api/userSession').auth('admin', PASSWORD).set('Authorization-Token-Only', 'true').expect(200)).body
      .authorizationToken;
    const n = kind === 'sqlite' ? 60_000 : 30_000;
    const items = Array.from({ length: n }, (_, i) => ({ entity: 'Product', payload: { sku: `K-${i}`, name: `n${i}`, quantity: i } }));
    const { jobId } = (await request(base).post('/api/upsertAsync').set('Authorization-Token', token).send(items).expect(200)).body;
    // Kill once part of the items is stored (read straight from the list, not from the job's
    // progress, which is saved only every 2 s and may already say 100 on a fast machine).
    let stored = 0;
    for (let i = 0; i < 3000 && stored === 0; i++) {
      stored = (await request(base).get('/api/Product?totalOnly=true').set('Authorization-Token', token).expect(200)).body.total;
      if (stored === 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(n);
    await stop(first, 'SIGKILL');

    const second = await startServer(db.url, port);
    children.push(second);
    let job: { status: string; result: { status: string }[] } = { status: 'Running', result: [] };
    for (let i = 0; i < 600 && !['Success', 'Failed'].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 250));
      job = (await request(base).get(`/api/Job/${jobId}`).set('Authorization-Token', token).expect(200)).body;
    }
    expect(job.status).toBe('Success');
    expect(job.result).toHaveLength(n);
    expect(job.result.every((r) => r.status === 'Created' || r.status === 'NotModified')).toBe(true);
    const total = (await request(base).get('/api/Product?totalOnly=true').set('Authorization-Token', token).expect(200)).body.total;
    expect(total).toBe(n);
    await stop(second, 'SIGTERM');
  });
});
