/**
 * The server of the upsert bench: Brand and Product served by `createEntityApi` behind Express,
 * on a free loopback port. Started by upsert.ts with `fork`; talks to it through child-ipc.ts.
 * BENCH_DATABASE_URL is a `sqlite:` path or a PostgreSQL URL.
 */
import http from 'node:http';
import { QueryCapture, serveHttpToBench } from './child-ipc';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const core = require('@entity-records/core') as typeof import('@entity-records/core');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express = require('express') as typeof import('express');

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

async function main(): Promise<void> {
  const api = core.createEntityApi({
    database: process.env.BENCH_DATABASE_URL as string,
    entities: [Brand, Product],
    admin: { userName: 'admin', password: process.env.BENCH_ADMIN_PASSWORD as string },
    logger: { info() {}, warn() {}, error: (x: unknown, m?: string) => console.error(m, x) },
  });
  await api.ready();
  const capture = new QueryCapture();
  // Only the statement is kept: a batch's bindings (a JSON recordset of 1,000 rows) are not needed.
  api.database.knex.on('query', (q: { sql: string }) => capture.record(q.sql, []));
  await serveHttpToBench(http.createServer(express().use(api.router)), capture, () => api.close());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
