import fs from 'node:fs';
import path from 'node:path';
import { childServerScope, ROOT, signIn, type ChildExit, type ChildServer, type ChildServerScope } from './child-server';
import { createTestDatabase, type TestDatabase } from './databases';

/** The compiled example server. */
export const PIM_SERVER = path.join(ROOT, 'examples/pim/dist/server.js');
export const PIM_PASSWORD = 'pim-fault-password';

/** An example server process with its database, storage and an admin token. */
export interface PimChild extends ChildServer {
  token: string;
  storageDir: string;
  /** A JSON request with the admin token. */
  call(method: string, pathname: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }>;
}

/** A database for the example: a file of SQLite in `dir`, or a fresh PostgreSQL database (dropped by `drop`). */
export async function pimDatabase(kind: 'sqlite' | 'postgres', dir: string, name: string): Promise<TestDatabase> {
  if (kind === 'postgres') return createTestDatabase('postgres');
  return { kind, url: `sqlite:${path.join(dir, `${name}.sqlite`)}`, drop: async () => undefined };
}

/** Registers the hooks of a test file that starts example servers (see `childServerScope`). */
export function pimScope(prefix: string): ChildServerScope {
  return childServerScope(PIM_SERVER, prefix);
}

/**
 * Starts the example on `db` with the storage `storageDir` and more environment, and signs the admin
 * in. Passwords are hashed at the lowest cost (PASSWORD_COST 14) unless `env` says otherwise.
 */
export async function startPim(scope: ChildServerScope, options: { db: TestDatabase; storageDir: string; env?: Record<string, string>; nodeArgs?: string[] }): Promise<PimChild> {
  const server = await scope.start({
    nodeArgs: options.nodeArgs,
    env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: options.db.url, STORAGE_DIR: options.storageDir, ADMIN_PASSWORD: PIM_PASSWORD, PASSWORD_COST: '14', ...options.env }),
    listening: (port) => new RegExp(`PIM example listening on http://127\\.0\\.0\\.1:${port} `),
    probePath: '/health',
  });
  const res = await signIn(server.url, 'admin', PIM_PASSWORD);
  if (res.status !== 200) throw new Error(`admin sign-in failed: ${res.status}`);
  const token = ((await res.json()) as { authorizationToken: string }).authorizationToken;
  return {
    ...server,
    token,
    storageDir: options.storageDir,
    async call(method, pathname, body) {
      const res = await fetch(`${server.url}${pathname}`, {
        method,
        headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/** Sends SIGKILL to the server process (by its pid) and waits for it to end. */
export async function killPim(server: ChildServer): Promise<ChildExit> {
  const ended = new Promise<ChildExit>((resolve) => server.child.once('exit', (code, signal) => resolve({ code, signal })));
  if (server.child.exitCode !== null || server.child.signalCode !== null) return { code: server.child.exitCode, signal: server.child.signalCode };
  server.child.kill('SIGKILL');
  return ended;
}

/** Starts a new peak of a process's resident memory (Linux: the peak since start would include start-up). */
export function resetPeakMemory(pid: number): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Resident memory of a process in MiB: now, and the peak since start or `resetPeakMemory` (Linux `/proc`). */
export function memoryOf(pid: number): { residentMiB: number; peakMiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { residentMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/** Every file under a directory (relative paths); the temporary files of writes among them. */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
}

/** Polls `check` every `everyMs` until it is true, at most `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean> | boolean, { timeoutMs = 30_000, everyMs = 50 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
