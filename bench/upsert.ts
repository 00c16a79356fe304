/**
 * Upsert throughput: batches of 1,000 items through POST /api/upsert over loopback HTTP, for new,
 * changed and unchanged rows, on SQLite and PostgreSQL, with the SQL statements each batch costs.
 * Run: npm run bench:upsert (BENCH_BATCHES=20 by default).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const core = require('@entity-records/core') as typeof import('@entity-records/core');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express = require('express') as typeof import('express');

const BATCH = 1000;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 20);
const PG_ADMIN = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const Brand = core.defineEntity({ name: 'Brand', fields: { name: { type: 'varchar', required: true, unique: true } } });
const Product = core.defineEntity({
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true },
    sku: { type: 'varchar', unique: true },
    price: { type: 'float' },
    quantity: { type: 'int' },
    isActive: { type: 'bool', default: true },
    brand: { type: 'link', entity: 'Brand' },
  },
});

async function pgAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

interface Row {
  db: string;
  scenario: string;
  recordsPerSecond: number;
  statementsPerBatch: number;
  statuses: string;
}

async function measure(kind: 'sqlite' | 'postgres'): Promise<Row[]> {
  const name = `er_bench_${randomBytes(5).toString('hex')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-bench-'));
  const url = kind === 'postgres' ? PG_ADMIN.replace(/\/[^/]*$/, `/${name}`) : `sqlite:${path.join(dir, 'bench.sqlite')}`;
  if (kind === 'postgres') await pgAdmin(`create database "${name}"`);
  const password = randomBytes(12).toString('hex');
  const api = core.createEntityApi({ database: url, entities: [Brand, Product], admin: { userName: 'admin', password }, logger: { info() {}, warn() {}, error: (m: string, x?: unknown) => console.error(m, x) } });
  await api.ready();
  const server: Server = await new Promise((resolve) => {
    const s = express().use(api.router).listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const auth = Buffer.from(`admin:${password}`).toString('base64');
    const login = await fetch(`${base}/api/userSession`, { headers: { Authorization: `Basic ${auth}`, 'Authorization-Token-Only': 'true' } });
    const token = ((await login.json()) as { authorizationToken: string }).authorizationToken;
    const brand = (await (await fetch(`${base}/api/Brand`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Authorization-Token': token }, body: JSON.stringify({ name: 'Bench' }) })).json()) as { id: string };
    let statements = 0;
    api.database.knex.on('query', () => void (statements += 1));
    const batch = (b: number, round: number) =>
      Array.from({ length: BATCH }, (_, i) => ({
        entity: 'Product',
        payload: { sku: `SKU-${b}-${i}`, name: `Product ${b}-${i}`, price: round === 1 ? i + 0.5 : i, quantity: i % 100, brandId: brand.id },
      }));
    const rows: Row[] = [];
    for (const [round, scenario] of [[0, 'new rows'], [1, 'changed rows'], [1, 'unchanged rows']] as const) {
      statements = 0;
      const counts = new Map<string, number>();
      const started = process.hrtime.bigint();
      for (let b = 0; b < BATCHES; b++) {
        const res = await fetch(`${base}/api/upsert`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Authorization-Token': token }, body: JSON.stringify(batch(b, round)) });
        const body = (await res.json()) as { status: string }[];
        if (!Array.isArray(body)) throw new Error(`upsert answered ${res.status}: ${JSON.stringify(body)}`);
        for (const r of body) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      rows.push({
        db: kind,
        scenario,
        recordsPerSecond: Math.round((BATCH * BATCHES) / seconds),
        statementsPerBatch: Math.round(statements / BATCHES),
        statuses: [...counts].map(([s, n]) => `${s} ${n}`).join(', '),
      });
    }
    return rows;
  } finally {
    server.close();
    await api.close();
    if (kind === 'postgres') await pgAdmin(`drop database if exists "${name}" with (force)`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows = [...(await measure('sqlite')), ...(await measure('postgres'))];
  console.log(`Upsert, ${BATCHES} batches of ${BATCH} items over loopback HTTP; node ${process.version}, ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'})`);
  console.log('| database | scenario | records/s | SQL statements per batch | results |');
  console.log('|---|---|---:|---:|---|');
  for (const r of rows) console.log(`| ${r.db} | ${r.scenario} | ${r.recordsPerSecond} | ${r.statementsPerBatch} | ${r.statuses} |`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
