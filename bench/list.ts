/**
 * Reads and writes of Product on PostgreSQL: our server against a floor (bare node:http + pg), one
 * after the other, with autocannon on loopback. See bench/README.md. Two schemas:
 *
 * - `--schema pim` (the default): the PIM example as it ships, against a floor running the same
 *   SQL. It also compares our 100-row page with the names of the brand and the categories against
 *   our plain 100-row page (the same rows, simple fields only): issue goal, at most 1.5 times.
 * - `--schema simple` (`npm run bench:simple`): Brand and Product of simple-entities.ts served by
 *   `createEntityApi` in a minimal Express app, against a floor whose SQL is written from what
 *   each answer needs (simple-floor.ts); both servers' SQL is printed.
 *
 *   npm run build && npm run bench:list [-- --schema simple --duration 10 --warmup 5 --rounds 3 --scenarios … --products N --profile DIR]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { linksTable, table, type Measured, type Row } from './list-report';
import { login, SCENARIOS, verify, type Scenario, type Target } from './list-scenarios';
import { seedSimple, SIMPLE_SCENARIOS } from './simple-scenarios';
import type { CapturedQuery } from './child-ipc';
import { summarize } from './profile-top';
import {
  BenchDatabase,
  cpuSnapshot,
  foreignShare,
  foreignTicks,
  machineFacts,
  machineTicks,
  ticksUsed,
  option,
  seed,
  ServerChild,
  staleBuildWarning,
  type Seeded,
} from './support';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>;
interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number };
}

const ROOT = path.resolve(__dirname, '..', '..');

const DURATION = Number(option('duration', '10'));
/** A fresh server needs thousands of requests before V8 has optimized its hot paths; 2 s measured it 25 % slow here. */
const WARMUP = Number(option('warmup', '5'));
const CONNECTIONS = Number(option('connections', '10'));
const PRODUCTS = Number(option('products', '100000'));
const PROFILE_DIR = option('profile', '');

/** What differs between the two schemas the bench measures. */
interface Schema {
  /** Our server and the floor, scripts of bench/dist. */
  ours: string;
  floor: string;
  /** The floor runs the same SQL as ours (checked before measuring), or SQL of its own (printed). */
  sameSql: boolean;
  seed(db: BenchDatabase, products: number): Promise<Seeded>;
  scenarios: Scenario[];
  /** What the seed holds, for the facts under the table. */
  rows: string;
}
const SCHEMAS: Record<string, Schema> = {
  pim: { ours: 'our-server.js', floor: 'bare-server.js', sameSql: true, seed, scenarios: SCENARIOS, rows: '100 brands, 200 categories (3 per product)' },
  simple: { ours: 'simple-server.js', floor: 'simple-floor.js', sameSql: false, seed: seedSimple, scenarios: SIMPLE_SCENARIOS, rows: '100 brands' },
};
const SCHEMA_NAME = option('schema', 'pim');
const SCHEMA = SCHEMAS[SCHEMA_NAME];
if (!SCHEMA) throw new Error(`--schema must be one of ${Object.keys(SCHEMAS).join(', ')}`);
const ONLY = option('scenarios', SCHEMA.scenarios.map((s) => s.key).join(',')).split(',');
/** Rounds of (ours, floor) per scenario; the best round of each counts (other work on a shared machine only lowers figures). */
const ROUNDS = Number(option('rounds', '1'));

/** Our pids, for telling our CPU use from other work on the machine. */
const ownPids = new Set<number>([process.pid]);
let databaseName = '';

async function load(server: ServerChild, token: string, s: Scenario, t: Target, data: Seeded, seconds: number, start: { i: number }) {
  return autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'authorization-token': token },
    requests: [
      {
        setupRequest: (req: Record<string, unknown>) => {
          const r = s.request(start.i++, t, data);
          return { ...req, method: r.method, path: r.path, body: r.body, headers: { ...(req.headers as object), ...(r.body && { 'content-type': 'application/json' }) } };
        },
      },
    ],
  });
}

async function measure(server: ServerChild, token: string, s: Scenario, t: Target, data: Seeded, counter: { i: number }): Promise<Measured> {
  if (WARMUP > 0) await load(server, token, s, t, data, WARMUP, counter);
  if (PROFILE_DIR) await server.ask({ type: 'profile-start' });
  const cpu0 = await server.cpuMicros();
  const m0 = cpuSnapshot();
  const t0 = machineTicks(ownPids, databaseName);
  const r = await load(server, token, s, t, data, DURATION, counter);
  const t1 = machineTicks(ownPids, databaseName);
  const m1 = cpuSnapshot();
  const cpu1 = await server.cpuMicros();
  const { usage } = await server.ask<{ usage: NodeJS.MemoryUsage }>({ type: 'memory' });
  if (PROFILE_DIR) await server.ask({ type: 'profile-stop', file: path.join(PROFILE_DIR, `${t}-${s.key}.cpuprofile`) }, 120_000);
  const ok = r['2xx'];
  return {
    rps: ok / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failed: r.non2xx + r.errors + r.timeouts,
    cpuPerRequestUs: ok ? (cpu1 - cpu0) / (ok + r.non2xx) : 0,
    databaseCpuPerRequestUs: ok ? (ticksUsed(t0.database, t1.database) * 1e6) / (ok + r.non2xx) : 0,
    machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
    foreign: foreignShare(t0.foreign, t1.foreign, r.duration),
    rssMiB: usage.rss / 2 ** 20,
  };
}


/** The statements each server sent for one request of a scenario: long lists of marks and bindings, and long bindings, cut short. */
function printedSql(s: Scenario, sql: Record<Target, CapturedQuery[]>): string {
  const marks = (text: string) => text.replace(/\$(\d+)(?:, \$\d+){3,}, \$(\d+)/g, '$$$1, …, $$$2');
  const value = (b: unknown) => (typeof b === 'string' && b.length > 80 ? `${b.slice(0, 60)}… (${b.length} characters)` : b);
  const bindings = (b: unknown[]) => JSON.stringify(b.slice(0, 8).map(value)) + (b.length > 8 ? ` and ${b.length - 8} more` : '');
  const line = (q: CapturedQuery) => `    ${marks(q.sql)}\n      -- ${bindings(q.bindings)}`;
  const side = (t: Target) => `  ${t} (${sql[t].length} statement${sql[t].length === 1 ? '' : 's'}):\n${sql[t].map(line).join('\n')}`;
  return `SQL of ${s.title}, the token check left out:\n${side('ours')}\n${side('floor')}`;
}

async function main(): Promise<void> {
  const stale = staleBuildWarning(ROOT);
  if (stale?.includes('missing')) throw new Error(stale);
  if (stale) console.warn(`warning: ${stale}`);
  const db = new BenchDatabase();
  const password = `bench-${Math.random().toString(36).slice(2)}`;
  const children: ServerChild[] = [];
  const cleanup = async () => {
    await Promise.all(children.map((c) => c.stop()));
    await db.drop();
  };
  const guard = setTimeout(() => {
    console.error('bench: overall time limit reached, stopping');
    void cleanup().finally(() => process.exit(2));
  }, (5 * 60 + 2 * ROUNDS * (WARMUP + DURATION + 30) * ONLY.length) * 1000);
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  try {
    if (PROFILE_DIR) fs.mkdirSync(PROFILE_DIR, { recursive: true });
    databaseName = db.name;
    const f0 = foreignTicks(ownPids, databaseName);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const background = foreignShare(f0, foreignTicks(ownPids, databaseName), 2);
    console.log(`other work on the machine before start: ${Math.round(background * 100)} % of its CPU`);
    await db.create();
    const env = { BENCH_DATABASE_URL: db.url, BENCH_ADMIN_PASSWORD: password, BENCH_TMP_DIR: os.tmpdir() };
    console.log(`database ${db.name}; starting our server (${SCHEMA_NAME} schema)…`);
    const ours = await ServerChild.start('our server', path.join(__dirname, SCHEMA.ours), env);
    children.push(ours);
    ownPids.add(ours.child.pid as number);
    console.log(`seeding ${PRODUCTS.toLocaleString('en-US')} products and ${SCHEMA.rows}…`);
    const data = await SCHEMA.seed(db, PRODUCTS);
    const floor = await ServerChild.start('floor', path.join(__dirname, SCHEMA.floor), env);
    children.push(floor);
    ownPids.add(floor.child.pid as number);
    const servers = { ours, floor };
    const token = await login(ours, password);
    const scenarios = SCHEMA.scenarios.filter((s) => ONLY.includes(s.key));
    const extraStatements = new Map<Scenario, number>();
    for (const s of scenarios) {
      const { problems, extra, sql } = await verify(s, servers, { token, data, sameSql: SCHEMA.sameSql });
      if (problems.length) throw new Error(`${s.title}: the servers do not answer alike:\n${problems.join('\n')}`);
      extraStatements.set(s, SCHEMA.sameSql ? extra.length : sql.ours.length - sql.floor.length);
      if (extra.length) console.log(`note: ${s.title}: ours sends ${extra.length} statement(s) the floor does not need:\n  ${extra.join('\n  ')}`);
      if (!SCHEMA.sameSql) console.log(printedSql(s, sql));
    }
    console.log(`the floor sends ${SCHEMA.sameSql ? 'the same SQL as ours (or a subset, as noted) and ' : ''}the same JSON for every scenario`);
    const rows: Row[] = [];
    const best = (a: Measured | undefined, b: Measured) => (a && a.rps >= b.rps ? a : b);
    for (const s of scenarios) {
      let o: Measured | undefined;
      let f: Measured | undefined;
      const counters = { ours: { i: 1 }, floor: { i: 1 } };
      for (let round = 1; round <= ROUNDS; round++) {
        const mo = await measure(ours, token, s, 'ours', data, counters.ours);
        const mf = await measure(floor, token, s, 'floor', data, counters.floor);
        const other = `other work ${Math.round(mo.foreign * 100)} / ${Math.round(mf.foreign * 100)} %`;
        console.log(`${s.title}${ROUNDS > 1 ? ` (round ${round})` : ''}: ours ${Math.round(mo.rps)} req/s, floor ${Math.round(mf.rps)} req/s, ${other}`);
        o = best(o, mo);
        f = best(f, mf);
      }
      rows.push({ s, ours: o as Measured, floor: f as Measured, extra: extraStatements.get(s) ?? 0 });
    }
    const facts = [
      ...(await machineFacts(db)),
      `other work on the machine before start: ${Math.round(background * 100)} % of its CPU`,
      `${SCHEMA_NAME} schema: ${PRODUCTS.toLocaleString('en-US')} products, ${SCHEMA.rows}; ${CONNECTIONS} connections; ${WARMUP} s warm-up + ${DURATION} s per scenario and server${ROUNDS > 1 ? `, best of ${ROUNDS} alternating rounds` : ''}${PROFILE_DIR ? '; CPU profiler ON (figures lowered by it)' : ''}`,
    ];
    console.log(`\n${[...linksTable(rows), table(rows, facts)].join('\n')}\n`);
    if (PROFILE_DIR) for (const s of scenarios) console.log(`${summarize(path.join(PROFILE_DIR, `ours-${s.key}.cpuprofile`), 15).lines.join('\n')}\n`);
  } finally {
    clearTimeout(guard);
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
