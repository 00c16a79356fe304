/**
 * Our server under test: the PIM example as it ships (`createPim` from examples/pim/dist), on a
 * free loopback port. Started by list.ts with `fork`; talks to it through child-ipc.ts.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { closeHttp, serveBench, watchHttp, type CapturedQuery } from './child-ipc';

interface PimLike {
  app: { listen(port: number, host: string): Server };
  api: {
    database: { knex: { on(event: 'query', fn: (q: { sql: string; bindings?: unknown[] }) => void): void } };
    close(): Promise<void>;
  };
}

const PIM_APP = path.resolve(__dirname, '../../examples/pim/dist/app.js');

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createPim } = require(PIM_APP) as { createPim(config: object): Promise<PimLike> };
  const databaseUrl = process.env.BENCH_DATABASE_URL as string;
  const pim = await createPim({
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
  let captured: CapturedQuery[] | undefined;
  pim.api.database.knex.on('query', (q) => captured?.push({ sql: q.sql, bindings: q.bindings ?? [] }));
  const server = pim.app.listen(0, '127.0.0.1');
  watchHttp(server);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  serveBench({
    port: (server.address() as AddressInfo).port,
    capture: {
      start: () => void (captured = []),
      stop: () => {
        const queries = captured ?? [];
        captured = undefined;
        return queries;
      },
    },
    async close() {
      await closeHttp(server);
      await pim.api.close();
    },
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
