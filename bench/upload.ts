/**
 * Chunked upload through the API on loopback: throughput and the server's memory as the file
 * grows (DESIGN.md: throughput near disk speed, heap flat in the file size).
 *
 *   npm run build && npm run bench:upload -- --size 1024 --chunk 2097152 --concurrency 4 [--db postgres]
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchDatabase, ServerChild } from './support';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const SIZE_MIB = Number(option('size', '1024'));
const CHUNK = Number(option('chunk', String(2 * 1024 * 1024)));
const CONCURRENCY = Number(option('concurrency', '4'));
const DB = option('db', 'sqlite');
const PASSWORD = 'bench-upload-password';
const MiB = 1024 * 1024;

type Memory = { heapUsed: number; rss: number; external: number; arrayBuffers: number; cpuMicros: number };
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** The bytes of chunk `i`: made from a seed on demand, so the client never holds the file either. */
function chunkBytes(i: number, total: number): Buffer {
  const size = Math.min(CHUNK, total - i * CHUNK);
  const seed = createHash('sha256').update(`chunk ${i}`).digest();
  const out = Buffer.allocUnsafe(size);
  for (let at = 0; at < size; at += seed.length) seed.copy(out, at);
  out.writeUInt32BE(i, 0);
  return out;
}

/** Plain sequential write of the same amount to the same disk: what "disk speed" means here. */
async function diskSpeed(dir: string, bytes: number): Promise<number> {
  const file = path.join(dir, 'disk-speed.bin');
  const block = randomBytes(CHUNK);
  const started = process.hrtime.bigint();
  const out = fs.createWriteStream(file);
  for (let written = 0; written < bytes; written += block.length) {
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  const fd = fs.openSync(file, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  fs.rmSync(file);
  return bytes / MiB / seconds;
}

async function main(): Promise<void> {
  const total = SIZE_MIB * MiB;
  const pieces = Math.ceil(total / CHUNK);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'er-bench-upload-'));
  const db = DB === 'postgres' ? new BenchDatabase() : undefined;
  let server: ServerChild | undefined;
  try {
    if (db) await db.create();
    const databaseUrl = db ? db.url : `sqlite:${path.join(tmp, 'bench.sqlite')}`;
    server = await ServerChild.start('server', path.join(__dirname, 'upload-server.js'), {
      BENCH_DATABASE_URL: databaseUrl,
      BENCH_STORAGE_DIR: path.join(tmp, 'files'),
      BENCH_ADMIN_PASSWORD: PASSWORD,
    }, ['--expose-gc', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])]);
    const memory = (collect = false) => server!.ask<Memory & { type: string }>({ type: 'memory', collect } as never);
    const login = await fetch(`${server.url}/api/userSession`, {
      headers: { Authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, 'Authorization-Token-Only': 'true' },
    });
    const token = ((await login.json()) as { authorizationToken: string }).authorizationToken;
    const send = async (body: object) => {
      const res = await fetch(`${server!.url}/api/File`, { method: 'POST', headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const answer = (await res.json()) as { chunks?: string[]; id?: string; error?: unknown };
      if (res.status !== 200) throw new Error(`chunk answered ${res.status}: ${JSON.stringify(answer)}`);
      return answer;
    };
    // Warm-up: a small chunked file, so that code paths are compiled and pools open.
    for (let i = 0; i < 3; i++) await send({ id: `warm-${i}`, name: 'warm.bin', fileUniqueHash: `warm-${i}`, start: 0, piecesCount: 1, piece: `data:application/octet-stream;base64,${randomBytes(CHUNK).toString('base64')}` });
    const baseline = await memory(true);

    const hash = createHash('sha256');
    for (let i = 0; i < pieces; i++) hash.update(chunkBytes(i, total));
    const expected = hash.digest('hex');

    let peak: Memory = { ...baseline };
    let livePeak = baseline.heapUsed;
    let tick = 0;
    const sampler = setInterval(async () => {
      // Every fifth sample after a full GC: the heap that is really held, not garbage not yet collected.
      const collect = ++tick % 5 === 0;
      const m = await memory(collect).catch(() => undefined);
      if (m && collect) livePeak = Math.max(livePeak, m.heapUsed);
      if (m) peak = { heapUsed: Math.max(peak.heapUsed, m.heapUsed), rss: Math.max(peak.rss, m.rss), external: Math.max(peak.external, m.external), arrayBuffers: Math.max(peak.arrayBuffers, m.arrayBuffers), cpuMicros: m.cpuMicros };
    }, 100);
    const common = { id: 'bench-file', name: 'bench.bin', fileUniqueHash: 'bench-hash', piecesCount: pieces };
    let next = 0;
    let completed: { id?: string } | undefined;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, pieces) }, async () => {
        while (next < pieces) {
          const i = next++;
          const answer = await send({ ...common, start: i * CHUNK, piece: `data:application/octet-stream;base64,${chunkBytes(i, total).toString('base64')}` });
          if (answer.id) completed = answer;
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    clearInterval(sampler);
    const after = await memory(true);
    const record = (await (await fetch(`${server.url}/api/File/bench-file`, { headers: { 'Authorization-Token': token } })).json()) as { hash: string; fileSize: number };
    if (!completed?.id || record.hash !== expected || record.fileSize !== total) throw new Error(`the file is wrong: ${JSON.stringify(record)}`);
    const disk = await diskSpeed(tmp, Math.min(total, 1024 * MiB));

    console.log(`chunked upload of ${mib(total)} in ${pieces} chunks of ${mib(CHUNK)}, ${CONCURRENCY} at a time, ${DB}, storage on ${tmp}`);
    console.log(`- CPUs: ${os.cpus().length} × ${os.cpus()[0]?.model.trim()} (client, server${db ? ' and PostgreSQL' : ''} share them); Node.js ${process.version}`);
    console.log(`- throughput through the API: ${(total / MiB / seconds).toFixed(1)} MiB/s (${seconds.toFixed(1)} s, base64 JSON bodies, hashing and assembly included)`);
    console.log(`- server CPU: ${((after.cpuMicros - baseline.cpuMicros) / 1e6 / seconds * 100).toFixed(0)} % of one core during the upload, ${((after.cpuMicros - baseline.cpuMicros) / 1e3 / (total / MiB)).toFixed(1)} ms per MiB (so at most ${((total / MiB) / ((after.cpuMicros - baseline.cpuMicros) / 1e6)).toFixed(0)} MiB/s on one core of its own)`);
    console.log(`- plain sequential write to the same disk: ${disk.toFixed(1)} MiB/s`);
    console.log(`- server heap used: ${mib(baseline.heapUsed)} before, peak ${mib(peak.heapUsed)} (+${mib(peak.heapUsed - baseline.heapUsed)}, garbage included), ${mib(after.heapUsed)} after GC (+${mib(after.heapUsed - baseline.heapUsed)})`);
    console.log(`- server live heap (after a full GC, sampled every 0.5 s during the upload): peak ${mib(livePeak)} (+${mib(livePeak - baseline.heapUsed)}, ${((livePeak - baseline.heapUsed) / CHUNK).toFixed(1)} chunk sizes)`);
    console.log(`- server RSS: ${mib(baseline.rss)} before, peak ${mib(peak.rss)} (+${mib(peak.rss - baseline.rss)}), ${mib(after.rss)} after`);
    console.log(`- server array buffers (request bodies, file buffers): peak ${mib(peak.arrayBuffers)}`);
  } finally {
    await server?.stop();
    await db?.drop().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
