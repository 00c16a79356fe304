/** What list.ts needs around the measurement: a database of its own, server children, facts. */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { CapturedQuery, ChildRequest } from './child-ipc';

export const PG_HOST = process.env.BENCH_PG_HOST ?? '127.0.0.1';
export const PG_PORT = Number(process.env.BENCH_PG_PORT ?? 5432);
export const PG_USER = process.env.BENCH_PG_USER ?? 'postgres';
const pgUrl = (database: string) => `postgres://${PG_USER}@${PG_HOST}:${PG_PORT}/${database}`;

/** A fresh database `er_bench_<random>`, made and dropped through the `postgres` database. */
export class BenchDatabase {
  readonly name = `er_bench_${randomBytes(6).toString('hex')}`;
  readonly url = pgUrl(this.name);
  private created = false;

  /** Runs `fn` on a connection to the `postgres` database (this one may not exist yet). */
  async withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: pgUrl('postgres') });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  async create(): Promise<void> {
    await this.withAdmin((c) => c.query(`create database "${this.name}"`));
    this.created = true;
  }

  async drop(): Promise<void> {
    if (!this.created) return;
    await this.withAdmin((c) => c.query(`drop database if exists "${this.name}" with (force)`));
    this.created = false;
  }

  async withClient<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }
}

export interface Seeded {
  productIds: string[];
  brandIds: string[];
}

/** Categories of the seed; each product is linked to CATEGORIES_PER_PRODUCT of them. */
export const CATEGORIES = 200;
export const CATEGORIES_PER_PRODUCT = 3;

/**
 * 100 brands, `products` products, 200 categories and 3 category links per product, in four
 * set-based statements (not measured). Prices are a permutation of 0.00 … 999.99 so filters and
 * sorts are deterministic; every product has a brand, name, sku, price and quantity, and three
 * different categories.
 */
export async function seed(db: BenchDatabase, products: number): Promise<Seeded> {
  return db.withClient(async (c) => {
    const admin = (await c.query('select id from "user" where user_name = $1', ['admin'])).rows[0].id as string;
    const at = new Date().toISOString().slice(0, 19).replace('T', ' ');
    await c.query(
      `insert into brand (id, name, code, created_at, modified_at, created_by_id, modified_by_id, deleted)
       select gen_random_uuid()::text, 'Brand ' || lpad(i::text, 3, '0'), 'B' || lpad(i::text, 3, '0'), $1, $1, $2, $2, false
       from generate_series(1, 100) i`,
      [at, admin],
    );
    await c.query(
      `insert into product (id, name, sku, price, quantity, is_active, brand_id, created_at, modified_at, created_by_id, modified_by_id, deleted)
       select gen_random_uuid()::text, 'Product ' || i, 'SKU-' || lpad(i::text, 7, '0'), ((i::bigint * 7919) % 100000) / 100.0,
              (i * 31) % 500, true, b.id, $1, $1, $2, $2, false
       from generate_series(1, $3::int) i
       join (select id, (row_number() over (order by name)) - 1 as n from brand) b on b.n = i % 100`,
      [at, admin, products],
    );
    await c.query(
      `insert into category (id, name, code, created_at, modified_at, created_by_id, modified_by_id, deleted)
       select gen_random_uuid()::text, 'Category ' || lpad(i::text, 3, '0'), 'C' || lpad(i::text, 3, '0'), $1, $1, $2, $2, false
       from generate_series(1, $3::int) i`,
      [at, admin, CATEGORIES],
    );
    // Product n (in id order) gets categories n, n + 67 and n + 134 (modulo 200, in name order): three different ones.
    await c.query(
      `insert into category_products__product_categories (product_id, category_id)
       select p.id, c.id
       from (select id, (row_number() over (order by id)) - 1 as n from product) p
       cross join generate_series(0, $1::int - 1) k
       join (select id, (row_number() over (order by name)) - 1 as n from category) c on c.n = (p.n + k * 67) % $2::int`,
      [CATEGORIES_PER_PRODUCT, CATEGORIES],
    );
    await c.query('vacuum analyze');
    const productIds = (await c.query('select id from product order by id')).rows.map((r) => r.id as string);
    const brandIds = (await c.query('select id from brand order by name')).rows.map((r) => r.id as string);
    return { productIds, brandIds };
  });
}

/** A server child started with `fork`, answering ChildRequest messages. */
export class ServerChild {
  private constructor(
    readonly label: string,
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(label: string, script: string, env: NodeJS.ProcessEnv, execArgv: string[] = []): Promise<ServerChild> {
    const child = fork(script, [], { env: { ...process.env, ...env }, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${label} did not start within 60 s`)), 60_000);
      child.once('exit', (code) => reject(new Error(`${label} exited with ${code} while starting`)));
      child.on('message', (m: { type: string; port?: number }) => {
        if (m.type === 'ready') (clearTimeout(timer), resolve(m.port as number));
      });
    });
    return new ServerChild(label, child, port);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Sends a request and waits for the answer of the same type. */
  ask<T = Record<string, unknown>>(message: ChildRequest, timeoutMs = 30_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => (this.child.off('message', onMessage), reject(new Error(`${this.label}: no answer to ${message.type}`))), timeoutMs);
      const onMessage = (m: { type: string }) => {
        if (m.type !== message.type) return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(m as T);
      };
      this.child.on('message', onMessage);
      this.child.send(message);
    });
  }

  async capture<T>(fn: () => Promise<T>): Promise<{ result: T; queries: CapturedQuery[] }> {
    await this.ask({ type: 'capture-start' });
    const result = await fn();
    const { queries } = await this.ask<{ queries: CapturedQuery[] }>({ type: 'capture-stop' });
    return { result, queries };
  }

  /** CPU time (user + system) the child has used, in microseconds. */
  async cpuMicros(): Promise<number> {
    const { usage } = await this.ask<{ usage: NodeJS.CpuUsage }>({ type: 'cpu' });
    return usage.user + usage.system;
  }

  /** Asks the child to stop; after 10 s it is killed (this child only, by its pid). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.child.connected) this.child.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** Busy share of all CPUs between two snapshots of os.cpus(). */
export function cpuSnapshot(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times.user + c.times.nice + c.times.sys + c.times.irq + c.times.idle;
    total += t;
    busy += t - c.times.idle;
  }
  return { busy, total };
}

/** CPUs, Node.js, PostgreSQL (when `db` is given), OS and memory. */
export async function machineFacts(db?: BenchDatabase): Promise<string[]> {
  const cpus = os.cpus();
  const pgVersion = db && (await db.withAdmin(async (c) => (await c.query('show server_version')).rows[0].server_version as string));
  return [
    `CPUs: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'} (shared by the load generator, the server(s) and the database)`,
    `Node.js ${process.version}${pgVersion ? `, PostgreSQL ${pgVersion}` : ''}, ${os.type()} ${os.release()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM`,
  ];
}

/** `--name value` from the command line, else `fallback`. */
export function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}

/** Statements of the token check (cached by the servers, so they appear now and then): not part of a request's own SQL. */
export const AUTH_SQL = /from "auth_token"|from "user" where|update "auth_token"|from "user_roles__role"/;

/** Warns when compiled code is older than its sources (the bench runs dist/, not src/). */
export function staleBuildWarning(root: string, packages = ['packages/core', 'examples/pim']): string | undefined {
  const newest = (dir: string): number => {
    let t = 0;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      t = Math.max(t, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
    }
    return t;
  };
  const entries: Record<string, string> = { 'packages/core': 'index.js', 'examples/pim': 'app.js' };
  for (const pkg of packages) {
    const [src, dist, entry] = [`${pkg}/src`, `${pkg}/dist`, `${pkg}/dist/${entries[pkg]}`];
    if (!fs.existsSync(path.join(root, entry))) return `${entry} is missing: run \`npm run build\` first.`;
    if (newest(path.join(root, src)) > newest(path.join(root, dist)) + 1000) return `${dist} is older than ${src}: run \`npm run build\` to measure the current code.`;
  }
  return undefined;
}

/** PostgreSQL's own processes (writers, checkpointer, launchers): their work is the bench database's on a quiet machine. */
const PG_AUXILIARY = /^postgres: [^:]+: (checkpointer|background writer|walwriter|autovacuum|logical replication|stats collector|archiver|walsender)/;

/**
 * What PostgreSQL work a process is: `database` (a backend of the bench database, or one of
 * PostgreSQL's auxiliary processes), `other` (a backend of another database), or undefined.
 */
function postgresRole(pid: number, stat: string, database: string): 'database' | 'other' | undefined {
  if (!stat.includes('(postgres)')) return undefined;
  const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  return cmdline.includes(` ${database} `) || PG_AUXILIARY.test(cmdline) ? 'database' : 'other';
}

/**
 * CPU ticks (1/100 s) of the machine's processes (Linux only; none elsewhere): per process for
 * everything that is not part of this bench (not this process or its children, not the
 * database's work: see `postgresRole`), and in all for the database's work. Tells whether other
 * work disturbed a measurement, and what the database spent.
 */
export function machineTicks(ownPids: Set<number>, database: string): { foreign: Map<number, number>; database: Map<number, number> } {
  const ticks = { foreign: new Map<number, number>(), database: new Map<number, number>() };
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return ticks;
  }
  for (const e of entries) {
    const pid = Number(e);
    if (ownPids.has(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const used = Number(fields[11]) + Number(fields[12]);
      if (used === 0) continue;
      ticks[postgresRole(pid, stat, database) === 'database' ? 'database' : 'foreign'].set(pid, used);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks;
}

/** The foreign processes' ticks of `machineTicks`. */
export const foreignTicks = (ownPids: Set<number>, database: string): Map<number, number> => machineTicks(ownPids, database).foreign;

/**
 * CPU seconds the processes of `after` used since `before` (a process that ended meanwhile is not
 * counted: what it used is gone with it).
 */
export function ticksUsed(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, t] of after) used += t - (before.get(pid) ?? 0);
  return used / 100;
}

/** Share of the whole machine the foreign processes used between two snapshots taken `seconds` apart. */
export const foreignShare = (before: Map<number, number>, after: Map<number, number>, seconds: number): number => ticksUsed(before, after) / seconds / os.cpus().length;
