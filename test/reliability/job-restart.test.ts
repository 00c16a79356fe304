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
    // pg-boss's default expiry (15 minutes): a job whose process died comes back by the sweep of
    // unleased running jobs, not by pg-boss handing it out again.
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), ADMIN_PASSWORD: PASSWORD, JOB_EXPIRE_SECONDS: '900' },
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

  const signIn = async (base: string) =>
    (await request(base).get('/api/userSession').auth('admin', PASSWORD).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken as string;

  /** Starts an upsert job of `n` new products and answers once part of them is stored. */
  async function jobUnderWay(base: string, { token, prefix }: { token: string; prefix: string }) {
    const n = kind === 'sqlite' ? 60_000 : 30_000;
    const items = Array.from({ length: n }, (_, i) => ({ entity: 'Product', payload: { sku: `${prefix}-${i}`, name: `n${i}`, quantity: i } }));
    const count = async (at = base) =>
      (await request(at).get(`/api/Product?totalOnly=true&where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=${prefix}-`).set('Authorization-Token', token).expect(200))
        .body.total as number;
    const { jobId } = (await request(base).post('/api/upsertAsync').set('Authorization-Token', token).send(items).expect(200)).body;
    // Kill once part of the items is stored (read straight from the list, not from the job's
    // progress, which is saved only every 2 s and may already say 100 on a fast machine).
    let stored = 0;
    for (let i = 0; i < 3000 && stored === 0; i++) {
      stored = await count();
      if (stored === 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(n);
    return { jobId: jobId as string, n, count };
  }

  /** Waits (at most 60 s) for the job to end; then every item was stored once. */
  async function endsWithEveryItemOnce(base: string, { token, jobId, n, count }: { token: string; jobId: string; n: number; count: (at: string) => Promise<number> }) {
    let job: { status: string; result: { status: string }[] } = { status: 'Running', result: [] };
    for (let i = 0; i < 240 && !['Success', 'Failed'].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 250));
      job = (await request(base).get(`/api/Job/${jobId}`).set('Authorization-Token', token).expect(200)).body;
    }
    expect(job.status).toBe('Success');
    expect(job.result).toHaveLength(n);
    expect(job.result.every((r) => r.status === 'Created' || r.status === 'NotModified')).toBe(true);
    expect(await count(base)).toBe(n);
  }

  it('completes after SIGKILL and restart, storing every item once', async () => {
    const port = await freePort();
    const first = await startServer(db.url, port);
    children.push(first);
    const base = `http://127.0.0.1:${port}`;
    const token = await signIn(base);
    const job = await jobUnderWay(base, { token, prefix: 'K' });
    await stop(first, 'SIGKILL');

    const second = await startServer(db.url, port);
    children.push(second);
    await endsWithEveryItemOnce(base, { token, ...job });
    await stop(second, 'SIGTERM');
  });

  if (kind === 'postgres') {
    it('is taken up by another process sharing the database within seconds when its own is killed', async () => {
      const [portA, portB] = [await freePort(), await freePort()];
      const a = await startServer(db.url, portA);
      children.push(a);
      const token = await signIn(`http://127.0.0.1:${portA}`);
      const job = await jobUnderWay(`http://127.0.0.1:${portA}`, { token, prefix: 'T' });
      const b = await startServer(db.url, portB);
      children.push(b);
      await stop(a, 'SIGKILL');
      await endsWithEveryItemOnce(`http://127.0.0.1:${portB}`, { token, ...job });
      await stop(b, 'SIGTERM');
    });
  }
});
