import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

/** Builds the workspace once when a compiled file a test runs is missing (`npm run build` does the same). */
export function ensureBuilt(file: string): void {
  if (!fs.existsSync(file)) execFileSync('npx', ['tsc', '-b', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * A port nobody listens on at this moment, on 127.0.0.1. Chosen below the kernel's ephemeral
 * range (32768 and up), so that servers of other tests listening on port 0 do not take it while
 * the child process starts.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export interface ChildServer {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends SIGTERM to this process (by its pid) and waits for it to end; SIGKILL after 10 s. */
  stop(): Promise<ChildExit>;
}

/** How a child process ended. */
export type ChildExit = { code: number | null; signal: NodeJS.Signals | null };

export interface ChildServerOptions {
  script: string;
  env: (port: number) => Record<string, string>;
  listening: (port: number) => RegExp;
  probePath?: string;
  timeoutMs?: number;
  /** Options for node before the script (e.g. `-r` of a preloaded file). */
  nodeArgs?: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `node <script>` with only the given environment (and PATH) on a free port, waits until it
 * prints `listening` (a line that shows this very process listens) and answers HTTP on
 * `probePath`. A port taken in the meantime (EADDRINUSE) is retried with another one; any other
 * early exit fails with the process output.
 */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startOnce({ ...options, port });
    } catch (error) {
      if (attempt < 3 && error instanceof Error && error.message.includes('EADDRINUSE')) continue;
      throw error;
    }
  }
}

async function startOnce(options: ChildServerOptions & { port: number }): Promise<ChildServer> {
  const { script, port, probePath = '/apidocs/openapi.json', timeoutMs = 60_000 } = options;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...options.env(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<ChildExit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let done: ChildExit | undefined;
  void exited.then((result) => (done = result));

  const url = `http://127.0.0.1:${port}`;
  const server: ChildServer = {
    child,
    url,
    output: () => output,
    async stop() {
      if (done) return done;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done) throw new Error(`${script} exited (${done.code ?? done.signal}) before answering:\n${output}`);
    try {
      if (options.listening(port).test(output)) {
        await fetch(`${url}${probePath}`, { signal: AbortSignal.timeout(5000) });
        return server;
      }
    } catch {
      // not answering yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${script} did not answer on ${url} within ${timeoutMs} ms:\n${output}`);
    }
    await sleep(100);
  }
}

/** The servers a test file starts from one script, and a folder for their files. */
export interface ChildServerScope {
  /** A fresh folder, made before the first test and removed after the last. */
  dir: string;
  start(options: Omit<ChildServerOptions, 'script'>): Promise<ChildServer>;
  /** Stops a server the test started and tells how it ended. */
  stop(server: ChildServer): Promise<ChildExit>;
}

/**
 * Registers the hooks of a test file that starts `script`: builds it when missing, makes the
 * folder, and after each test stops the servers the test left running.
 */
export function childServerScope(script: string, dirPrefix: string): ChildServerScope {
  const running: ChildServer[] = [];
  const scope: ChildServerScope = {
    dir: '',
    async start(options) {
      const server = await startChildServer({ script, ...options });
      running.push(server);
      return server;
    },
    stop(server) {
      const index = running.indexOf(server);
      if (index >= 0) running.splice(index, 1);
      return server.stop();
    },
  };
  beforeAll(() => {
    ensureBuilt(script);
    scope.dir = fs.mkdtempSync(path.join(os.tmpdir(), dirPrefix));
  });
  afterEach(async () => {
    for (const server of running.splice(0)) await server.stop();
  });
  afterAll(() => fs.rmSync(scope.dir, { recursive: true, force: true }));
  return scope;
}

/** Preloaded with `nodeArgs: LOOP_BLOCKS_ARGS`, a child server records how long its event loop was held (see loop-blocks.cjs). */
export const LOOP_BLOCKS_ARGS = ['-r', path.join(ROOT, 'test/support/loop-blocks.cjs')];

/** A time the event loop of a child server was held for more than 50 ms. */
export interface LoopBlock {
  /** How long it was held. */
  wallMs: number;
  /** The CPU time the process spent meanwhile: the work that held it, whatever the machine's load. */
  cpuMs: number;
}

/** The blocks of a child server started with LOOP_BLOCKS_ARGS since the last call (or its start). */
export async function loopBlocks(server: ChildServer): Promise<LoopBlock[]> {
  const from = server.output().length;
  server.child.kill('SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 20) {
    const line = /loop-blocks (\[.*\])\n/.exec(server.output().slice(from));
    if (line) return JSON.parse(line[1]) as LoopBlock[];
    await sleep(20);
  }
  throw new Error(`no loop-blocks line from ${server.url}:\n${server.output().slice(from)}`);
}

/** Signs in with Basic credentials and returns the token (CONTRACT.md §3). */
export async function signIn(url: string, userName: string, password: string): Promise<Response> {
  return fetch(`${url}/api/userSession`, {
    headers: {
      Authorization: `Basic ${Buffer.from(`${userName}:${password}`).toString('base64')}`,
      'Authorization-Token-Only': 'true',
    },
  });
}
