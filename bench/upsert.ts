/**
 * Upsert throughput: batches of 1,000 Product items through POST /api/upsert over loopback HTTP,
 * for new, changed and unchanged rows, on SQLite and PostgreSQL, with the SQL statements each batch
 * costs and the server's CPU per record. The server runs in a child process (simple-server.ts);
 * request bodies are serialized before the clock starts. See bench/README.md.
 *
 *   npm run build && npm run bench:upsert [-- --batches 20 --rounds 3 --warmup 5 --databases sqlite,postgres --profile DIR]
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { summarize } from './profile-top';
import { AUTH_SQL, BenchDatabase, cpuSnapshot, foreignShare, machineFacts, machineTicks, ticksUsed, option, ServerChild, staleBuildWarning } from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const BATCH = 1000;
const BATCHES = Number(option('batches', process.env.BENCH_BATCHES ?? '20'));
/** Rounds of the three scenarios; the best round counts, the spread is printed. */
const ROUNDS = Number(option('rounds', '3'));
/** Untimed batches of each scenario before the first round: a fresh process is slow until V8 has optimized its hot paths. */
const WARMUP = Number(option('warmup', '5'));
const DATABASES = option('databases', 'sqlite,postgres').split(',') as Kind[];
const PROFILE_DIR = option('profile', '');

type Kind = 'sqlite' | 'postgres';
const SCENARIOS = [
  { key: 'new', title: 'new rows', expect: 'Created' },
  { key: 'changed', title: 'changed rows', expect: 'Updated' },
  { key: 'unchanged', title: 'unchanged rows', expect: 'NotModified' },
] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Measured {
  recordsPerSecond: number;
  cpuPerRecordUs: number;
  /** PostgreSQL's CPU per record (its backends of the bench database and its writers); 0 on SQLite, which runs in the server. */
  databaseCpuPerRecordUs: number;
  machineBusy: number;
  foreign: number;
}
interface Row {
  kind: Kind;
  s: Scenario;
  rounds: Measured[];
  statements: number;
}

/** The body of one batch: the same keys in every scenario of a round; `changed` moves the price. */
function batchBody(prefix: string, b: number, s: Scenario, brandId: string): string {
  const items = Array.from({ length: BATCH }, (_, i) => ({
    entity: 'Product',
    payload: { sku: `SKU-${prefix}-${b}-${i}`, name: `Product ${b}-${i}`, price: s.key === 'new' ? i : i + 0.5, quantity: i % 100, brandId },
  }));
  return JSON.stringify(items);
}

class Client {
  constructor(
    readonly server: ServerChild,
    readonly token: string,
  ) {}

  static async login(server: ServerChild, password: string): Promise<Client> {
    const auth = Buffer.from(`admin:${password}`).toString('base64');
    const res = await fetch(`${server.url}/api/userSession`, { headers: { Authorization: `Basic ${auth}`, 'Authorization-Token-Only': 'true' } });
    if (!res.ok) throw new Error(`login failed: ${res.status} ${await res.text()}`);
    return new Client(server, ((await res.json()) as { authorizationToken: string }).authorizationToken);
  }

  async post(path: string, body: string): Promise<{ status: number; json: unknown }> {
    const res = await fetch(this.server.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Authorization-Token': this.token }, body });
    return { status: res.status, json: await res.json() };
  }

  /** Sends one batch; throws unless every item got the expected status. */
  async upsert(body: string, expect: string): Promise<void> {
    const { status, json } = await this.post('/api/upsert', body);
    if (status !== 200 || !Array.isArray(json)) throw new Error(`upsert answered ${status}: ${JSON.stringify(json).slice(0, 300)}`);
    const other = (json as { status: string; message?: string }[]).find((r) => r.status !== expect);
    if (other || json.length !== BATCH) throw new Error(`expected ${BATCH} × ${expect}, got ${JSON.stringify(other ?? json.length)}`);
  }
}

const ownPids = new Set<number>([process.pid]);
/** Undoes what a measurement set up (its server, its database), also on Ctrl-C. */
const cleanups = new Set<() => Promise<void>>();

/**
 * One round of the three scenarios on fresh keys. The first batch of each scenario is sent with
 * the SQL recorded (statements per batch) and not timed; the other `batches` are timed.
 */
async function round(client: Client, prefix: string, brandId: string, batches: number, databaseName: string, profile?: string): Promise<{ measured: Measured[]; statements: number[] }> {
  const measured: Measured[] = [];
  const statements: number[] = [];
  for (const s of SCENARIOS) {
    const bodies = Array.from({ length: batches + 1 }, (_, b) => batchBody(prefix, b, s, brandId));
    const { queries } = await client.server.capture(() => client.upsert(bodies[0], s.expect));
    statements.push(queries.filter((q) => !AUTH_SQL.test(q.sql)).length);
    if (profile) await client.server.ask({ type: 'profile-start' });
    const cpu0 = await client.server.cpuMicros();
    const m0 = cpuSnapshot();
    const t0 = machineTicks(ownPids, databaseName);
    const started = process.hrtime.bigint();
    for (let b = 1; b <= batches; b++) await client.upsert(bodies[b], s.expect);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const t1 = machineTicks(ownPids, databaseName);
    const m1 = cpuSnapshot();
    const cpu1 = await client.server.cpuMicros();
    if (profile) await client.server.ask({ type: 'profile-stop', file: `${profile}-${s.key}.cpuprofile` }, 120_000);
    const records = batches * BATCH;
    measured.push({
      recordsPerSecond: records / seconds,
      cpuPerRecordUs: (cpu1 - cpu0) / records,
      databaseCpuPerRecordUs: (ticksUsed(t0.database, t1.database) * 1e6) / records,
      machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
      foreign: foreignShare(t0.foreign, t1.foreign, seconds),
    });
  }
  return { measured, statements };
}

async function measure(kind: Kind): Promise<Row[]> {
  const pg = kind === 'postgres' ? new BenchDatabase() : undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-bench-'));
  const password = randomBytes(12).toString('hex');
  let server: ServerChild | undefined;
  const cleanup = async () => {
    await server?.stop();
    await pg?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  cleanups.add(cleanup);
  try {
    await pg?.create();
    const url = pg ? pg.url : `sqlite:${path.join(dir, 'bench.sqlite')}`;
    server = await ServerChild.start(`${kind} server`, path.join(__dirname, 'simple-server.js'), { BENCH_DATABASE_URL: url, BENCH_ADMIN_PASSWORD: password });
    ownPids.add(server.child.pid as number);
    const client = await Client.login(server, password);
    const brand = await client.post('/api/Brand', JSON.stringify({ name: 'Bench' }));
    const brandId = (brand.json as { id: string }).id;
    // On SQLite nothing is excluded by name: a random name matches no PostgreSQL backend.
    const databaseName = pg?.name ?? randomBytes(6).toString('hex');
    if (WARMUP > 0) await round(client, 'warmup', brandId, WARMUP, databaseName);
    const rows: Row[] = SCENARIOS.map((s) => ({ kind, s, rounds: [], statements: 0 }));
    for (let r = 1; r <= ROUNDS; r++) {
      const profile = PROFILE_DIR && r === ROUNDS ? path.join(PROFILE_DIR, kind) : undefined;
      const { measured, statements } = await round(client, `r${r}`, brandId, BATCHES, databaseName, profile);
      measured.forEach((m, i) => {
        rows[i].rounds.push(m);
        rows[i].statements = statements[i];
      });
      const other = measured.map((m) => `${Math.round(m.foreign * 100)} %`).join(' / ');
      console.log(`${kind} round ${r}: ${measured.map((m, i) => `${SCENARIOS[i].title} ${Math.round(m.recordsPerSecond)}/s`).join(', ')} (other work ${other})`);
    }
    return rows;
  } finally {
    await cleanup();
    cleanups.delete(cleanup);
  }
}

function table(rows: Row[]): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const pct = (v: number) => `${Math.round(v * 100)} %`;
  const lines = [
    '| database | scenario | records/s, best | all rounds | server CPU per record | database CPU per record | SQL statements per batch | machine busy | other work |',
    '|---|---|---:|---|---:|---:|---:|---:|---:|',
  ];
  for (const { kind, s, rounds, statements } of rows) {
    const best = rounds.reduce((a, b) => (b.recordsPerSecond > a.recordsPerSecond ? b : a));
    const all = rounds.map((m) => n(m.recordsPerSecond)).join(', ');
    lines.push(`| ${kind} | ${s.title} | ${n(best.recordsPerSecond)} | ${all} | ${n(best.cpuPerRecordUs)} µs | ${kind === 'postgres' ? `${n(best.databaseCpuPerRecordUs)} µs` : '—'} | ${statements} | ${pct(best.machineBusy)} | ${pct(best.foreign)} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const stale = staleBuildWarning(ROOT, ['packages/core']);
  if (stale?.includes('missing')) throw new Error(stale);
  if (stale) console.warn(`warning: ${stale}`);
  process.once('SIGINT', () => void Promise.all([...cleanups].map((c) => c())).finally(() => process.exit(130)));
  if (PROFILE_DIR) fs.mkdirSync(PROFILE_DIR, { recursive: true });
  const rows: Row[] = [];
  for (const kind of DATABASES) rows.push(...(await measure(kind)));
  const facts = await machineFacts(DATABASES.includes('postgres') ? new BenchDatabase() : undefined);
  console.log(`\nUpsert, batches of ${BATCH} items over loopback HTTP, one request at a time; ${WARMUP} untimed batches per scenario, then ${ROUNDS} round(s) of ${BATCHES} timed batches`);
  console.log(`${table(rows)}\n`);
  for (const f of facts) console.log(`- ${f}`);
  console.log('- "other work": CPU share of the machine used meanwhile by processes outside this bench (0 % on a quiet machine)');
  if (PROFILE_DIR) {
    for (const kind of DATABASES) for (const s of SCENARIOS) console.log(`\n${summarize(path.join(PROFILE_DIR, `${kind}-${s.key}.cpuprofile`), 25).lines.join('\n')}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
