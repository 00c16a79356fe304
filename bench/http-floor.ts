/**
 * What the HTTP layer alone costs per request: the same 350-byte answer sent by bare `node:http`
 * and by Express 5 in several shapes (see http-floor-server.ts), each in a child process, loaded
 * by autocannon on loopback. Prints requests per second and the server's CPU per request.
 *
 *   npm run bench:http [-- --duration 5 --warmup 3 --connections 10]
 */
import path from 'node:path';
import { option, ServerChild } from './support';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (options: Record<string, unknown>) => Promise<{ requests: { total: number }; duration: number; non2xx: number }>;

const DURATION = Number(option('duration', '5'));
const WARMUP = Number(option('warmup', '3'));
const CONNECTIONS = Number(option('connections', '10'));
const ALL_LAYERS = [
  'node:http',
  'node:http, prototypes swapped',
  'express, the answer written by hand',
  'express, res.json',
  'express, routed like ours',
  'express routed like ours, born with its prototypes',
];
const LAYERS = process.env.LAYERS ? process.env.LAYERS.split(';') : ALL_LAYERS;

async function measure(layer: string): Promise<{ rps: number; cpuUs: number }> {
  const server = await ServerChild.start(layer, path.join(__dirname, 'http-floor-server.js'), { BENCH_HTTP_LAYER: layer });
  try {
    const url = `${server.url}/api/Product/01a21a9a-09e2-70f4-9363-6bc4b49c4dd0`;
    if (WARMUP > 0) await autocannon({ url, connections: CONNECTIONS, duration: WARMUP });
    const cpu0 = await server.cpuMicros();
    const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION });
    const cpu1 = await server.cpuMicros();
    if (r.non2xx) throw new Error(`${layer}: ${r.non2xx} answers were not 2xx`);
    return { rps: r.requests.total / r.duration, cpuUs: (cpu1 - cpu0) / r.requests.total };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const rows: string[] = [];
  let bare: { rps: number; cpuUs: number } | undefined;
  for (const layer of LAYERS) {
    const m = await measure(layer);
    bare ??= m;
    rows.push(`| ${layer} | ${Math.round(m.rps).toLocaleString('en-US')} | ${Math.round(m.cpuUs)} µs | ${(bare.cpuUs / m.cpuUs).toFixed(2)}× |`);
  }
  console.log(['', '| HTTP layer | req/s | server CPU per request | node:http ÷ this, CPU |', '|---|---:|---:|---:|', ...rows].join('\n'));
  console.log(`\n${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per layer, one server at a time (Node.js ${process.version})`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
