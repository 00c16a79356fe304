/**
 * Server-sent events: the time from a write to its event at each of many subscribers of one
 * process, and the server's memory per subscriber. The server (simple-server.ts: Brand and Product
 * behind Express) runs in a child process with --expose-gc; this process opens the subscribers
 * (`GET /api/events?entityName=Product` over loopback, each its own connection), then sends one
 * `PATCH /api/Product/{id}` at a time and notes when each subscriber has the event of that write.
 * See bench/README.md.
 *
 *   npm run build && npm run bench:events [-- --subscribers 1000 --writes 50 --databases sqlite,postgres]
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { BenchDatabase, machineFacts, option, ServerChild, staleBuildWarning } from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const SUBSCRIBERS = Number(option('subscribers', '1000'));
const WRITES = Number(option('writes', '50'));
/** Pause between writes, so that the deliveries of one write do not overlap the next. */
const PAUSE_MS = Number(option('pause', '100'));
const DATABASES = option('databases', 'sqlite,postgres').split(',') as Kind[];
type Kind = 'sqlite' | 'postgres';

/** One open event stream: calls `onEvent` with the record id of each event, when it has come whole. */
function subscribe(url: string, token: string, onEvent: (recordId: string) => void): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events?entityName=Product`, { agent: false, headers: { 'Authorization-Token': token } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`events answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (data) onEvent((JSON.parse(data.slice(6)) as { recordId: string }).recordId);
        }
      });
      // The stream is open once its first comment came.
      res.once('data', () => resolve(req));
    });
    req.on('error', reject);
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function signIn(url: string, password: string): Promise<string> {
  const res = await fetch(`${url}/api/userSession`, { headers: { Authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`, 'Authorization-Token-Only': 'true' } });
  if (!res.ok) throw new Error(`sign-in answered ${res.status}`);
  return ((await res.json()) as { authorizationToken: string }).authorizationToken;
}

async function measure(kind: Kind): Promise<string[]> {
  const db = kind === 'postgres' ? new BenchDatabase() : undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-bench-events-'));
  const password = randomBytes(9).toString('hex');
  await db?.create();
  const server = await ServerChild.start(`${kind} server`, path.join(__dirname, 'simple-server.js'), {
    BENCH_DATABASE_URL: db?.url ?? `sqlite:${path.join(dir, 'bench.db')}`,
    BENCH_ADMIN_PASSWORD: password,
  }, ['--expose-gc']);
  const streams: http.ClientRequest[] = [];
  try {
    const token = await signIn(server.url, password);
    const headers = { 'Authorization-Token': token, 'Content-Type': 'application/json' };
    const created = await fetch(`${server.url}/api/Product`, { method: 'POST', headers, body: JSON.stringify({ name: 'watched', price: 0 }) });
    const productId = ((await created.json()) as { id: string }).id;
    const before = (await server.ask<{ usage: NodeJS.MemoryUsage }>({ type: 'memory' })).usage;
    // Each write is waited for by every subscriber: `pending` counts those still waiting.
    let waiting: { sentAt: bigint; pending: number; done: () => void; latencies: number[] } | undefined;
    const onEvent = (recordId: string) => {
      if (!waiting || recordId !== productId) return;
      waiting.latencies.push(Number(process.hrtime.bigint() - waiting.sentAt) / 1e6);
      if (--waiting.pending === 0) waiting.done();
    };
    for (let i = 0; i < SUBSCRIBERS; i += 50) {
      streams.push(...(await Promise.all(Array.from({ length: Math.min(50, SUBSCRIBERS - i) }, () => subscribe(server.url, token, onEvent)))));
    }
    const after = (await server.ask<{ usage: NodeJS.MemoryUsage }>({ type: 'memory' })).usage;
    const latencies: number[] = [];
    const writeMs: number[] = [];
    for (let w = 0; w < WRITES; w++) {
      const all = new Promise<void>((done) => (waiting = { sentAt: process.hrtime.bigint(), pending: SUBSCRIBERS, done, latencies }));
      const started = process.hrtime.bigint();
      const res = await fetch(`${server.url}/api/Product/${productId}`, { method: 'PATCH', headers, body: JSON.stringify({ price: w + 1 }) });
      writeMs.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (res.status !== 200) throw new Error(`PATCH answered ${res.status}`);
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`write ${w}: ${waiting?.pending} subscribers got no event within 10 s`)), 10_000).unref());
      await Promise.race([all, timeout]);
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    latencies.sort((a, b) => a - b);
    writeMs.sort((a, b) => a - b);
    const perSubscriber = (key: 'rss' | 'heapUsed') => Math.round((after[key] - before[key]) / SUBSCRIBERS / 102.4) / 10;
    return [
      `${kind.padEnd(8)} ${String(SUBSCRIBERS).padStart(5)} subscribers × ${WRITES} writes: write → event p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms` +
        ` (the PATCH itself: p50 ${percentile(writeMs, 50).toFixed(1)} ms)`,
      `${' '.repeat(9)}server memory per subscriber: ${perSubscriber('rss')} KiB resident, ${perSubscriber('heapUsed')} KiB heap (after a full GC; ${Math.round(before.rss / 2 ** 20)} → ${Math.round(after.rss / 2 ** 20)} MiB resident)`,
    ];
  } finally {
    for (const s of streams) s.destroy();
    await server.stop();
    await db?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const stale = staleBuildWarning(ROOT, ['packages/core']);
  if (stale) console.warn(stale);
  for (const line of await machineFacts()) console.log(line);
  console.log(`Every subscriber is its own connection from this process (which parses every stream: its time is in the figures).`);
  for (const kind of DATABASES) for (const line of await measure(kind)) console.log(line);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
