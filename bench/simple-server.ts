/**
 * Our server of the simple schema: Brand and Product (simple-entities.ts) served by
 * `createEntityApi` behind a minimal Express app, on a free loopback port. Started with `fork` by
 * upsert.ts and by list.ts in its simple mode; talks to them through child-ipc.ts.
 * BENCH_DATABASE_URL is a `sqlite:` path or a PostgreSQL URL.
 */
import http from 'node:http';
import { QueryCapture, serveHttpToBench } from './child-ipc';
import { BRAND, PRODUCT } from './simple-entities';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const core = require('@entity-records/core') as typeof import('@entity-records/core');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express = require('express') as typeof import('express');

async function main(): Promise<void> {
  const api = core.createEntityApi({
    database: process.env.BENCH_DATABASE_URL as string,
    entities: [core.defineEntity(BRAND), core.defineEntity(PRODUCT)],
    admin: { userName: 'admin', password: process.env.BENCH_ADMIN_PASSWORD as string },
    logger: { info() {}, warn() {}, error: (x: unknown, m?: string) => console.error(m, x) },
  });
  await api.ready();
  const capture = new QueryCapture();
  api.database.knex.on('query', (q: { sql: string; bindings?: unknown[] }) => capture.record(q.sql, q.bindings ?? []));
  const app = express().use(api.router);
  // BENCH_PLAIN_SERVER=1: Node's own server, as `app.listen` makes (Express swaps prototypes).
  const server = process.env.BENCH_PLAIN_SERVER === '1' ? http.createServer(app) : core.createHttpServer(app);
  await serveHttpToBench(server, capture, () => api.close());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
