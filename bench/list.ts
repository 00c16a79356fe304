/**
 * Reads and writes of Product on PostgreSQL: our server (the PIM example as it ships) against the
 * floor (bare node:http + pg running the same SQL), one after the other, with autocannon on
 * loopback. See bench/README.md.
 *
 * It also compares our 100-row page with the names of the brand and the categories against our
 * plain 100-row page (the same rows, simple fields only): issue goal, at most 1.5 times the time.
 *
 *   npm run build && npm run bench:list [-- --duration 10 --warmup 5 --rounds 3 --scenarios get,filter,brand,plain,links,create --profile DIR]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CapturedQuery } from './child-ipc';
import { summarize } from './profile-top';
import {
  AUTH_SQL,
  BenchDatabase,
  cpuSnapshot,
  foreignShare,
  foreignTicks,
  machineFacts,
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
const ONLY = option('scenarios', 'get,filter,brand,plain,links,create').split(',');
/** Rounds of (ours, floor) per scenario; the best round of each counts (other work on a shared machine only lowers figures). */
const ROUNDS = Number(option('rounds', '1'));

type Target = 'ours' | 'floor';
interface Req {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}
interface Scenario {
  key: string;
  title: string;
  /** Least ratio of our req/s to the floor's (DESIGN.md), if the scenario has one. */
  goal?: number;
  /** Same JSON from both servers (false: records made at different moments with different ids). */
  sameAnswer: boolean;
  request(i: number, target: Target, data: Seeded): Req;
}

const br = (s: string) => s.replace(/\[/g, '%5B').replace(/\]/g, '%5D');
const THRESHOLDS = [100, 300, 500, 700, 900];
/** The simple fields of the plain list; the list with links selects them too. */
const PLAIN_FIELDS = 'name,sku,price';
/** Issue goal: the page with brand and categories names takes at most this many times the plain page's time. */
const LINKS_GOAL = 1.5;
const runId = Date.now().toString(36);

const SCENARIOS: Scenario[] = [
  {
    key: 'get',
    title: 'get one record by id',
    goal: 0.5,
    sameAnswer: true,
    request: (i, _t, d) => ({ method: 'GET', path: `/api/Product/${d.productIds[(i * 7919) % d.productIds.length]}` }),
  },
  {
    key: 'filter',
    title: 'list: filter + sort + count, 100 rows',
    goal: 0.8,
    sameAnswer: true,
    request: (i) => ({
      method: 'GET',
      path: br(`/api/Product?where[0][type]=greaterThan&where[0][attribute]=price&where[0][value]=${THRESHOLDS[i % THRESHOLDS.length]}&sortBy=price&asc=true&maxSize=100`),
    }),
  },
  {
    key: 'brand',
    title: 'list 100 rows with the brand name',
    goal: 0.6,
    sameAnswer: true,
    request: () => ({ method: 'GET', path: '/api/Product?select=name,sku,price,brandName&maxSize=100&collectionOnly=true' }),
  },
  {
    key: 'plain',
    title: 'plain list, 100 rows',
    sameAnswer: true,
    request: () => ({ method: 'GET', path: `/api/Product?select=${PLAIN_FIELDS}&maxSize=100&collectionOnly=true` }),
  },
  {
    key: 'links',
    title: 'list 100 rows with brand and categories names',
    sameAnswer: true,
    request: () => ({ method: 'GET', path: `/api/Product?select=${PLAIN_FIELDS},brandName,categoriesNames&maxSize=100&collectionOnly=true` }),
  },
  {
    key: 'create',
    title: 'create one',
    goal: 0.5,
    sameAnswer: false,
    request: (i, t, d) => ({
      method: 'POST',
      path: '/api/Product',
      body: JSON.stringify({ name: `Bench product ${i}`, sku: `bench-${runId}-${t}-${i}`, price: (i % 1000) + 0.5, quantity: i % 50, brandId: d.brandIds[i % d.brandIds.length] }),
    }),
  },
];

async function login(server: ServerChild, password: string): Promise<string> {
  const res = await fetch(`${server.url}/api/userSession`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`, 'authorization-token-only': 'true' },
  });
  if (!res.ok) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { authorizationToken: string }).authorizationToken;
}

async function send(server: ServerChild, token: string, req: Req): Promise<{ status: number; body: unknown }> {
  const res = await fetch(server.url + req.path, {
    method: req.method,
    headers: { 'authorization-token': token, ...(req.body && { 'content-type': 'application/json' }) },
    body: req.body,
  });
  return { status: res.status, body: await res.json() };
}


interface Verdict {
  problems: string[];
  /** Statements our server sends beyond the floor's (redundant work, counted against ours). */
  extra: string[];
}

/**
 * Before measuring: every statement of the floor must appear, in order and with the same
 * bindings, among ours, and the JSON must be the same. Statements only ours sends are allowed
 * but reported: the floor does the work the answer needs, not our redundant work.
 */
async function verify(s: Scenario, servers: Record<Target, ServerChild>, token: string, data: Seeded): Promise<Verdict> {
  const seen = {} as Record<Target, { status: number; body: unknown; queries: CapturedQuery[] }>;
  for (const t of ['ours', 'floor'] as Target[]) {
    const { result, queries } = await servers[t].capture(() => send(servers[t], token, s.request(0, t, data)));
    seen[t] = { ...result, queries: queries.filter((q) => !AUTH_SQL.test(q.sql)) };
  }
  const problems: string[] = [];
  const { ours, floor } = seen;
  if (ours.status !== 200 || floor.status !== 200) problems.push(`status ours ${ours.status}, floor ${floor.status}: ${JSON.stringify(ours.body).slice(0, 300)}`);
  const bindings = (q: CapturedQuery) => JSON.stringify(s.sameAnswer ? q.bindings : q.bindings.length);
  const extra: string[] = [];
  let f = 0;
  for (const q of ours.queries) {
    const want = floor.queries[f];
    if (want && want.sql === q.sql) {
      if (bindings(want) !== bindings(q)) problems.push(`bindings differ for ${q.sql.slice(0, 80)}…: ours ${bindings(q)}, floor ${bindings(want)}`);
      f += 1;
    } else extra.push(q.sql);
  }
  if (f < floor.queries.length) {
    const list = (q: CapturedQuery[]) => q.map((x) => x.sql).join('\n         ');
    problems.push(`the floor sends SQL ours does not:\n  ours:  ${list(ours.queries)}\n  floor: ${list(floor.queries)}`);
  }
  const comparable = (body: unknown) => {
    if (s.sameAnswer) return JSON.stringify(body);
    const { id, sku, createdAt, modifiedAt, ...rest } = body as Record<string, unknown>;
    return JSON.stringify({ keys: Object.keys(body as object), rest, types: [typeof id, typeof sku, typeof createdAt, typeof modifiedAt] });
  };
  if (comparable(ours.body) !== comparable(floor.body)) {
    problems.push(`JSON differs:\n  ours:  ${comparable(ours.body).slice(0, 400)}\n  floor: ${comparable(floor.body).slice(0, 400)}`);
  }
  return { problems, extra };
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
  cpuPerRequestUs: number;
  machineBusy: number;
  /** Share of the machine used by processes outside the bench meanwhile. */
  foreign: number;
}

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
  const f0 = foreignTicks(ownPids, databaseName);
  const r = await load(server, token, s, t, data, DURATION, counter);
  const f1 = foreignTicks(ownPids, databaseName);
  const m1 = cpuSnapshot();
  const cpu1 = await server.cpuMicros();
  if (PROFILE_DIR) await server.ask({ type: 'profile-stop', file: path.join(PROFILE_DIR, `${t}-${s.key}.cpuprofile`) }, 120_000);
  const ok = r['2xx'];
  return {
    rps: ok / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failed: r.non2xx + r.errors + r.timeouts,
    cpuPerRequestUs: ok ? (cpu1 - cpu0) / (ok + r.non2xx) : 0,
    machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
    foreign: foreignShare(f0, f1, r.duration),
  };
}

type Row = { s: Scenario; ours: Measured; floor: Measured; extra: number };

function table(rows: Row[], facts: string[]): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const lines = [
    '| scenario | ours req/s | floor req/s | ratio | goal | met |',
    '|---|---:|---:|---:|---:|:---:|',
    ...rows.map(({ s, ours, floor, extra }) => {
      const ratio = ours.rps / floor.rps;
      const fail = ours.failed || floor.failed ? ` (failed: ours ${ours.failed}, floor ${floor.failed})` : '';
      const more = extra ? ` (ours: ${extra} more SQL statement${extra > 1 ? 's' : ''})` : '';
      const goal = s.goal === undefined ? '| — | — |' : `| ≥ ${s.goal}× | ${ratio >= s.goal ? 'yes' : 'no'} |`;
      return `| ${s.title}${more}${fail} | ${n(ours.rps)} | ${n(floor.rps)} | ${ratio.toFixed(2)}× ${goal}`;
    }),
    '',
    '| scenario | p50 / p99 ms, ours | p50 / p99 ms, floor | server CPU per request, ours | floor | machine busy, ours / floor | other work, ours / floor |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(({ s, ours, floor }) => {
      const us = (v: number) => `${n(v)} µs`;
      const pct = (v: number) => `${Math.round(v * 100)} %`;
      return `| ${s.title} | ${ours.p50} / ${ours.p99} | ${floor.p50} / ${floor.p99} | ${us(ours.cpuPerRequestUs)} | ${us(floor.cpuPerRequestUs)} | ${pct(ours.machineBusy)} / ${pct(floor.machineBusy)} | ${pct(ours.foreign)} / ${pct(floor.foreign)} |`;
    }),
    '',
    ...facts.map((f) => `- ${f}`),
    `- ${PRODUCTS.toLocaleString('en-US')} products, 100 brands; ${CONNECTIONS} connections; ${WARMUP} s warm-up + ${DURATION} s per scenario and server${ROUNDS > 1 ? `, best of ${ROUNDS} alternating rounds` : ''}${PROFILE_DIR ? '; CPU profiler ON (figures lowered by it)' : ''}`,
    '- "other work": CPU share of the machine used meanwhile by processes outside this bench (0 % on a quiet machine)',
  ];
  return lines.join('\n');
}

/**
 * The page with brand and categories names against the plain page, on each server: how many
 * times the plain page's time it takes (plain req/s ÷ links req/s), and the same for server CPU.
 */
function linksTable(rows: Row[]): string[] {
  const plain = rows.find((r) => r.s.key === 'plain');
  const links = rows.find((r) => r.s.key === 'links');
  if (!plain || !links) return [];
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const line = (label: string, p: Measured, l: Measured, goal: boolean) => {
    const times = p.rps / l.rps;
    const met = goal ? `≤ ${LINKS_GOAL}× | ${times <= LINKS_GOAL ? 'yes' : 'no'}` : '— | —';
    return `| ${label} | ${n(p.rps)} | ${n(l.rps)} | ${times.toFixed(2)}× | ${(l.cpuPerRequestUs / p.cpuPerRequestUs).toFixed(2)}× | ${met} |`;
  };
  return [
    '| server | plain list req/s | with brand and categories names req/s | time, links ÷ plain | server CPU, links ÷ plain | goal | met |',
    '|---|---:|---:|---:|---:|---:|:---:|',
    line('ours', plain.ours, links.ours, true),
    line('floor', plain.floor, links.floor, false),
    '',
  ];
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
    console.log(`database ${db.name}; starting our server (PIM example)…`);
    const ours = await ServerChild.start('our server', path.join(__dirname, 'our-server.js'), env);
    children.push(ours);
    ownPids.add(ours.child.pid as number);
    console.log(`seeding ${PRODUCTS.toLocaleString('en-US')} products and 100 brands…`);
    const data = await seed(db, PRODUCTS);
    const floor = await ServerChild.start('floor', path.join(__dirname, 'bare-server.js'), env);
    children.push(floor);
    ownPids.add(floor.child.pid as number);
    const servers = { ours, floor };
    const token = await login(ours, password);
    const scenarios = SCENARIOS.filter((s) => ONLY.includes(s.key));
    const extraStatements = new Map<Scenario, number>();
    for (const s of scenarios) {
      const { problems, extra } = await verify(s, servers, token, data);
      if (problems.length) throw new Error(`${s.title}: the servers do not do the same work:\n${problems.join('\n')}`);
      extraStatements.set(s, extra.length);
      if (extra.length) console.log(`note: ${s.title}: ours sends ${extra.length} statement(s) the floor does not need:\n  ${extra.join('\n  ')}`);
    }
    console.log('the floor sends the same SQL as ours (or a subset, as noted) and the same JSON for every scenario');
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
    const facts = [...(await machineFacts(db)), `other work on the machine before start: ${Math.round(background * 100)} % of its CPU`];
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
