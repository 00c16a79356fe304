/**
 * Mixed traffic against the example app as it ships (`examples/pim/dist/server.js`, a child
 * process of its own), on SQLite and on PostgreSQL: reads, lists, writes, upserts and sign-ins at
 * 50 connections for 60 s. Prints the requests answered, the 5xx among them (goal 0), p50/p99
 * latency and the server's peak resident memory. All on loopback. See bench/README.md.
 *
 *   npm run build && npm run bench:load [-- --duration 60 --connections 50 --databases sqlite,postgres]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BenchDatabase, foreignShare, foreignTicks, machineFacts, option, staleBuildWarning } from './support';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (options: Record<string, unknown>) => Promise<LoadResult>;
interface LoadResult {
  '1xx': number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
  errors: number;
  timeouts: number;
  duration: number;
  latency: { p50: number; p99: number; max: number };
}

const ROOT = path.resolve(__dirname, '..', '..');
const DURATION = Number(option('duration', '60'));
const CONNECTIONS = Number(option('connections', '50'));
const DATABASES = option('databases', 'sqlite,postgres').split(',') as Kind[];
const PASSWORD = 'bench-load-password';
const PRODUCTS = 2000;
type Kind = 'sqlite' | 'postgres';

/** The share of each kind of request in every 100: reads and lists most, a sign-in now and then (`--mix get=40,…`). */
const MIX: [kind: string, count: number][] = option('mix', 'get=40,list=20,filter=10,create=12,update=12,upsert=5,signIn=1')
  .split(',')
  .map((part) => part.split('=') as [string, string])
  .map(([kind, count]) => [kind, Number(count)]);
const CYCLE = MIX.flatMap(([kind, count]) => Array<string>(count).fill(kind));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The example server on `databaseUrl`, started as `npm start` would, on a free loopback port. */
async function startExample(databaseUrl: string, storageDir: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'examples/pim/dist/server.js')], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, STORAGE_DIR: storageDir, ADMIN_PASSWORD: PASSWORD },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the example did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`the example exited with ${code} while starting`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('PIM example listening')) (clearTimeout(timer), resolve());
    });
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** Sends SIGTERM to the example (by its pid) and waits for it to end; SIGKILL after 15 s. */
async function stopExample(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

async function signIn(url: string): Promise<string> {
  const res = await fetch(`${url}/api/userSession`, { headers: { Authorization: basic, 'Authorization-Token-Only': 'true' } });
  return ((await res.json()) as { authorizationToken: string }).authorizationToken;
}

/** 20 brands and PRODUCTS products through the API (not measured); answers the product ids. */
async function seed(url: string, token: string): Promise<string[]> {
  const post = async (body: unknown) => {
    const res = await fetch(`${url}/api/upsert`, { method: 'POST', headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return (await res.json()) as { entity: { id: string } }[];
  };
  await post(Array.from({ length: 20 }, (_, i) => ({ entity: 'Brand', payload: { name: `Load brand ${i}` } })));
  const ids: string[] = [];
  for (let start = 0; start < PRODUCTS; start += 1000) {
    const items = Array.from({ length: 1000 }, (_, i) => ({ entity: 'Product', payload: { name: `Load product ${start + i}`, sku: `LOAD-${start + i}`, price: (start + i) % 997, quantity: i } }));
    ids.push(...(await post(items)).map((r) => r.entity.id));
  }
  return ids;
}

/** The request number `i` of the mix. */
function request(i: number, ids: string[]): { method: string; path: string; body?: string; headers?: Record<string, string> } {
  const id = ids[(i * 7919) % ids.length];
  const unique = `${process.pid}-${i}`;
  switch (CYCLE[i % CYCLE.length]) {
    case 'get':
      return { method: 'GET', path: `/api/Product/${id}` };
    case 'list':
      return { method: 'GET', path: `/api/Product?maxSize=50&offset=${(i * 50) % PRODUCTS}` };
    case 'filter':
      return { method: 'GET', path: `/api/Product?where[0][type]=greaterThan&where[0][attribute]=price&where[0][value]=${i % 900}&sortBy=price&maxSize=20` };
    case 'create':
      return { method: 'POST', path: '/api/Product', body: JSON.stringify({ name: `Created ${unique}`, sku: `C-${unique}`, price: i % 500 }) };
    case 'update':
      return { method: 'PATCH', path: `/api/Product/${id}`, body: JSON.stringify({ price: i % 1000, quantity: i % 50 }) };
    case 'upsert':
      return {
        method: 'POST',
        path: '/api/upsert',
        body: JSON.stringify(Array.from({ length: 10 }, (_, k) => ({ entity: 'Product', payload: { sku: `U-${(i + k) % 500}`, name: `Upserted ${(i + k) % 500}`, quantity: i % 100 } }))),
      };
    default:
      return { method: 'GET', path: '/api/userSession', headers: { authorization: basic, 'authorization-token-only': 'true' } };
  }
}

/** Resident memory of a process in MiB, now or at its peak since `resetPeak` (Linux `/proc`). */
function memory(pid: number, kind: 'VmRSS' | 'VmHWM'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${kind}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
}
const resetPeak = (pid: number) => fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');

interface Row {
  kind: Kind;
  result: LoadResult;
  rssBefore: number;
  rssPeak: number;
  exitCode: number | null;
  /** Share of the machine other processes used during the run. */
  otherWork: number;
}

async function run(kind: Kind): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-load-'));
  const pg = kind === 'postgres' ? new BenchDatabase() : undefined;
  try {
    if (pg) await pg.create();
    const example = await startExample(pg ? pg.url : `sqlite:${path.join(dir, 'load.sqlite')}`, path.join(dir, 'files'));
    try {
      const token = await signIn(example.url);
      const ids = await seed(example.url, token);
      // As a database in service, with statistics (autovacuum would analyze the seeded tables
      // within a minute or so, at a moment that would differ from run to run).
      if (pg) await pg.withClient((c) => c.query('vacuum analyze'));
      const pid = example.child.pid as number;
      resetPeak(pid);
      const rssBefore = memory(pid, 'VmRSS');
      let next = 0;
      const own = new Set([process.pid, pid]);
      const before = foreignTicks(own, pg?.name ?? '');
      process.stdout.write(`${kind}: ${DURATION} s at ${CONNECTIONS} connections…\n`);
      const result = await autocannon({
        url: example.url,
        connections: CONNECTIONS,
        duration: DURATION,
        headers: { 'authorization-token': token },
        requests: [
          {
            setupRequest: (req: Record<string, unknown>) => {
              const r = request(next++, ids);
              const headers = { ...(req.headers as object), ...(r.body && { 'content-type': 'application/json' }), ...r.headers };
              return { ...req, method: r.method, path: r.path, body: r.body, headers };
            },
          },
        ],
      });
      const rssPeak = memory(pid, 'VmHWM');
      const otherWork = foreignShare(before, foreignTicks(own, pg?.name ?? ''), result.duration);
      return { kind, result, rssBefore, rssPeak, otherWork, exitCode: await stopExample(example.child) };
    } finally {
      if (example.child.exitCode === null) example.child.kill('SIGKILL');
    }
  } finally {
    if (pg) await pg.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(rows: Row[]): string[] {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const lines = [
    '| database | requests answered | req/s | 2xx | 4xx | 5xx | errors / timeouts | p50 / p99 ms | server resident MiB, before → peak | exit on SIGTERM | other work |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { kind, result: r, rssBefore, rssPeak, exitCode, otherWork } of rows) {
    const answered = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
    lines.push(
      `| ${kind} | ${n(answered)} | ${n(answered / r.duration)} | ${n(r['2xx'])} | ${n(r['4xx'])} | ${n(r['5xx'])} | ${r.errors} / ${r.timeouts} | ${r.latency.p50} / ${r.latency.p99} | ${n(rssBefore)} → ${n(rssPeak)} | ${exitCode} | ${Math.round(otherWork * 100)} % |`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const stale = staleBuildWarning(ROOT);
  if (stale) throw new Error(stale);
  const facts = await machineFacts(DATABASES.includes('postgres') ? new BenchDatabase() : undefined);
  const rows: Row[] = [];
  for (const kind of DATABASES) rows.push(await run(kind));
  console.log(
    [
      '',
      `Mixed traffic on examples/pim, ${DURATION} s at ${CONNECTIONS} connections; in every 100 requests: ${MIX.map(([k, c]) => `${c} ${k}`).join(', ')}`,
      '(get: one Product by id; list: 50 Products; filter: price > x sorted by price, 20 rows; create and update: one Product;',
      ' upsert: 10 Products, new or existing; signIn: Basic credentials, scrypt at the default cost).',
      ...facts,
      '',
      ...report(rows),
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
