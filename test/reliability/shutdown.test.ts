import path from 'node:path';
import { TEST_DBS, type TestDatabase } from '../support/databases';
import { filesUnder, pimDatabase, pimScope, startPim, waitFor, type PimChild } from '../support/pim-child';
import { refusesConnections, slowUpload } from '../support/slow-upload';

/**
 * CONTRACT §17: SIGTERM stops accepting connections, lets the requests in flight finish within a
 * grace period, hands running jobs back to the queue at a safe point, removes temporary files,
 * closes the pool and exits 0. The example server is the process under test.
 */
jest.setTimeout(180_000);

const scope = pimScope('er-shutdown-');
const temporaries = (server: PimChild) => filesUnder(path.join(server.storageDir, 'tmp'));

describe.each(TEST_DBS)('SIGTERM on %s', (kind) => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await pimDatabase(kind, scope.dir, `shutdown-${Date.now()}`);
  });
  afterEach(() => db.drop());

  const start = (name: string, env: Record<string, string> = {}) => startPim(scope, { db, storageDir: path.join(scope.dir, `files-${kind}-${name}`), env });

  it('answers every request in flight, takes no new connection, leaves no temporary file and exits 0', async () => {
    const server = await start('inflight');
    const upload = slowUpload({ url: server.url, token: server.token, name: 'slow.bin', size: 3 * 1024 * 1024, pieces: 12, everyMs: 150 });
    const items = Array.from({ length: 300 }, (_, i) => ({ entity: 'Product', payload: { name: `in flight ${i}`, sku: `flight-${i}`, brand: { name: `flight brand ${i % 7}` } } }));
    const upsert = server.call('POST', '/api/upsert', items);
    const reads = Array.from({ length: 5 }, () => server.call('GET', '/api/Product?maxSize=50'));
    await waitFor(() => temporaries(server).length > 0);

    const exited = new Promise<{ code: number | null; at: number }>((resolve) => server.child.once('exit', (code) => resolve({ code, at: Date.now() })));
    server.child.kill('SIGTERM');
    const signalled = Date.now();
    await waitFor(() => server.output().includes('SIGTERM: finishing the requests in flight'));
    expect(await refusesConnections(server.url)).toBe(true);

    const [uploaded, upserted, ...listed] = await Promise.all([upload.answer, upsert, ...reads]);
    expect(uploaded.status).toBe(200);
    expect(JSON.parse(uploaded.body)).toMatchObject({ name: 'slow.bin', fileSize: 3 * 1024 * 1024 });
    expect(upserted.status).toBe(200);
    expect(upserted.body.map((r: { status: string }) => r.status)).toEqual(Array(300).fill('Created'));
    expect(listed.map((r) => r.status)).toEqual(Array(5).fill(200));
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalled).toBeLessThan(10_000);
    expect(temporaries(server)).toEqual([]);
    expect(filesUnder(path.join(server.storageDir, 'files'))).toHaveLength(1);
  });

  it('ends an upload still running after the grace period and removes its temporary file', async () => {
    const server = await start('grace', { CLOSE_GRACE_MS: '1000' });
    // Half the file, then nothing: the upload is in flight until the server gives up on it.
    const upload = slowUpload({ url: server.url, token: server.token, name: 'stalled.bin', size: 2 * 1024 * 1024, pieces: 2, piecesOf: 4, everyMs: 100 });
    await waitFor(() => temporaries(server).length > 0);
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(900);
    await expect(upload.answer).rejects.toThrow();
    expect(temporaries(server)).toEqual([]);
    expect(filesUnder(path.join(server.storageDir, 'files'))).toEqual([]);
    upload.abort();
  });

  it('hands a running job back at a safe point; after a restart it finishes, every item stored once', async () => {
    const first = await start('job');
    const count = 10_000;
    const items = Array.from({ length: count }, (_, i) => ({ entity: 'Brand', payload: { name: `job brand ${i}`, code: `c${i}` } }));
    const { jobId } = (await first.call('POST', '/api/upsertAsync', items)).body;
    const stored = async () => (await first.call('GET', '/api/Brand?totalOnly=true')).body.total as number;
    await waitFor(async () => (await stored()) > 0, { everyMs: 20 });
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    first.child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const second = await start('job');
    let job = { status: 'Running', result: [] as { status: string }[] };
    await waitFor(
      async () => {
        job = (await second.call('GET', `/api/Job/${jobId}`)).body;
        return job.status === 'Success' || job.status === 'Failed';
      },
      { timeoutMs: 120_000, everyMs: 250 },
    );
    expect(job.status).toBe('Success');
    expect(job.result).toHaveLength(count);
    expect(job.result.every((r) => r.status === 'Created' || r.status === 'NotModified')).toBe(true);
    expect((await second.call('GET', '/api/Brand?totalOnly=true')).body.total).toBe(count);
  });
});
