/**
 * Our server under test: the PIM example as it ships (`createPim` from examples/pim/dist), on a
 * free loopback port. Started by list.ts with `fork`; talks to it through child-ipc.ts.
 */
import http from 'node:http';
import path from 'node:path';
import { QueryCapture, serveHttpToBench } from './child-ipc';

interface PimLike {
  app: http.RequestListener;
  api: {
    database: { knex: { on(event: 'query', fn: (q: { sql: string; bindings?: unknown[] }) => void): void } };
    close(): Promise<void>;
  };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createHttpServer } = require('@entity-records/core') as typeof import('@entity-records/core');

const PIM_APP = path.resolve(__dirname, '../../examples/pim/dist/app.js');
const PIM_CONFIG = path.resolve(__dirname, '../../examples/pim/dist/config.js');

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createPim } = require(PIM_APP) as { createPim(config: object): Promise<PimLike> };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { readConfig } = require(PIM_CONFIG) as { readConfig(env: Record<string, string>): object };
  const databaseUrl = process.env.BENCH_DATABASE_URL as string;
  const pim = await createPim({
    // The example's settings as its environment would give them (quiet, no demo data), then the bench's.
    ...readConfig({ LOG_LEVEL: 'silent', DEMO_DATA: '0' }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl,
    storageDir: path.join(process.env.BENCH_TMP_DIR ?? '/tmp', 'files'),
    publicUrl: 'http://127.0.0.1',
    adminUserName: 'admin',
    adminPassword: process.env.BENCH_ADMIN_PASSWORD,
    languages: ['en_US'],
    fileUrlAllowedHosts: [],
  });
  const capture = new QueryCapture();
  pim.api.database.knex.on('query', (q) => capture.record(q.sql, q.bindings ?? []));
  // BENCH_PLAIN_SERVER=1: Node's own server, as `app.listen` makes (Express swaps prototypes).
  const server = process.env.BENCH_PLAIN_SERVER === '1' ? http.createServer(pim.app) : createHttpServer(pim.app as unknown as import('express').Express);
  await serveHttpToBench(server, capture, () => pim.api.close());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
