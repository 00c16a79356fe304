import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TEST_DBS, type TestDatabase } from '../support/databases';
import { memoryOf, pimDatabase, pimScope, resetPeakMemory, startPim, PIM_PASSWORD } from '../support/pim-child';

/**
 * CONTRACT §17: memory stays bounded however many clients sign in or import files at once. The
 * example runs as a process of its own; its resident memory is read from /proc before the burst
 * and its peak after. Bounds are generous: without the limits the same bursts grew the process
 * by 500 MiB and more.
 */
jest.setTimeout(180_000);

const CPUS = os.availableParallelism();
const MiB = 1024 * 1024;
const scope = pimScope('er-memory-');
const describeLinux = process.platform === 'linux' ? describe : describe.skip;

describeLinux.each(TEST_DBS)('memory under bursts on %s', (kind) => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await pimDatabase(kind, scope.dir, `memory-${Date.now()}`);
  });
  afterEach(() => db.drop());

  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

  it('stays flat under 100 parallel sign-ins: hashes run CPUs at a time, a bounded queue waits, the rest get 503 with Retry-After', async () => {
    // Each hash takes 128 MiB (scrypt N=2^17, the default cost) for a fraction of a second.
    const server = await startPim(scope, { db, storageDir: path.join(scope.dir, `files-${kind}-signin`), env: { PASSWORD_HASH_QUEUE: '4', PASSWORD_COST: '17' } });
    await settle();
    resetPeakMemory(server.child.pid as number);
    const before = memoryOf(server.child.pid as number);
    const basic = `Basic ${Buffer.from(`admin:${PIM_PASSWORD}`).toString('base64')}`;
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => fetch(`${server.url}/api/userSession`, { headers: { Authorization: basic, 'Authorization-Token-Only': 'true' } })),
    );
    const after = memoryOf(server.child.pid as number);
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(CPUS);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    for (const res of answers.filter((r) => r.status === 503)) expect(res.headers.get('retry-after')).toBe('1');
    expect(after.peakMiB - before.residentMiB).toBeLessThan(CPUS * 128 + 128);
  });

  it('keeps parallel base64 imports to a bounded number in memory: large bodies are read a few at a time', async () => {
    const server = await startPim(scope, { db, storageDir: path.join(scope.dir, `files-${kind}-base64`) });
    await settle();
    resetPeakMemory(server.child.pid as number);
    const before = memoryOf(server.child.pid as number);
    const body = JSON.stringify({ name: 'burst.bin', fileContents: `data:application/octet-stream;base64,${Buffer.alloc(6 * MiB, 7).toString('base64')}` });
    const answers = await Promise.all(
      Array.from({ length: 32 }, () => fetch(`${server.url}/api/File`, { method: 'POST', headers: { 'Authorization-Token': server.token, 'Content-Type': 'application/json' }, body })),
    );
    const after = memoryOf(server.child.pid as number);
    expect(answers.map((res) => res.status)).toEqual(Array(32).fill(200));
    expect((await server.call('GET', '/api/File?totalOnly=true')).body.total).toBe(32);
    // Four bodies of 8 MiB of text at a time, each held a few times over while it is parsed and decoded.
    expect(after.peakMiB - before.residentMiB).toBeLessThan(400);
  });

  it('downloads parallel URL imports four at a time, streaming, with memory flat in the file size', async () => {
    let open = 0;
    let most = 0;
    const source = http.createServer((_req, res) => {
      open += 1;
      most = Math.max(most, open);
      res.once('close', () => (open -= 1));
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(16 * MiB) });
      const block = Buffer.alloc(MiB, 3);
      let sent = 0;
      const pump = () => {
        while (sent < 16) {
          sent += 1;
          if (!res.write(block)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    try {
      const server = await startPim(scope, { db, storageDir: path.join(scope.dir, `files-${kind}-url`), env: { FILE_URL_ALLOWED_HOSTS: '127.0.0.1' } });
      await settle();
      resetPeakMemory(server.child.pid as number);
    const before = memoryOf(server.child.pid as number);
      const url = `http://127.0.0.1:${(source.address() as AddressInfo).port}/big.bin`;
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => server.call('POST', '/api/File', { name: `url-${i}.bin`, url })));
      const after = memoryOf(server.child.pid as number);
      expect(answers.map((res) => [res.status, res.body.fileSize])).toEqual(Array(12).fill([200, 16 * MiB]));
      expect(most).toBe(4);
      expect(after.peakMiB - before.residentMiB).toBeLessThan(96);
    } finally {
      source.closeAllConnections();
      source.close();
    }
  });
});
