/**
 * The server of upload.ts: the PIM example as it ships (`createPim` from examples/pim/dist), with
 * its storage in the directory the bench gives, on a free loopback port. Answers `memory` (after
 * an optional full GC) and `stop` over the IPC channel of `fork`.
 */
import type { AddressInfo } from 'node:net';
import path from 'node:path';

interface PimLike {
  app: { listen(port: number, host: string): import('node:http').Server };
  api: { close(): Promise<void> };
}

const PIM_APP = path.resolve(__dirname, '../../examples/pim/dist/app.js');
const PIM_CONFIG = path.resolve(__dirname, '../../examples/pim/dist/config.js');

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createPim } = require(PIM_APP) as { createPim(config: object): Promise<PimLike> };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { readConfig } = require(PIM_CONFIG) as { readConfig(env: Record<string, string>): object };
  const pim = await createPim({
    // The example's settings as its environment would give them (quiet, no demo data), then the bench's.
    ...readConfig({ LOG_LEVEL: 'silent', DEMO_DATA: '0' }),
    port: 0,
    host: '127.0.0.1',
    databaseUrl: process.env.BENCH_DATABASE_URL,
    storageDir: process.env.BENCH_STORAGE_DIR,
    publicUrl: 'http://127.0.0.1',
    adminUserName: 'admin',
    adminPassword: process.env.BENCH_ADMIN_PASSWORD,
    languages: ['en_US'],
    fileUrlAllowedHosts: [],
  });
  const server = pim.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', async (m: { type: string; collect?: boolean }) => {
    if (m.type === 'memory') {
      if (m.collect) gc?.();
      const { heapUsed, rss, external, arrayBuffers } = process.memoryUsage();
      const cpu = process.cpuUsage();
      process.send?.({ type: 'memory', heapUsed, rss, external, arrayBuffers, cpuMicros: cpu.user + cpu.system });
    } else if (m.type === 'stop') {
      server.closeAllConnections();
      server.close();
      await pim.api.close().catch(() => undefined);
      process.exit(0);
    }
  });
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
