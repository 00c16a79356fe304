import Database from 'better-sqlite3';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { childServerScope, freePort, ROOT, signIn, type ChildServer } from '../../../test/support/child-server';
import { createTestDatabase, TEST_DBS } from '../../../test/support/databases';
import { durableDatabase } from '../../../test/support/instances';

const SERVER = path.join(ROOT, 'examples/pim/dist/server.js');

// Each test starts real server processes; a busy machine needs more than the default 30 s.
jest.setTimeout(120_000);

const scope = childServerScope(SERVER, 'er-pim-start-');

function startPim(env: Record<string, string>): Promise<ChildServer> {
  return scope.start({
    env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', STORAGE_DIR: path.join(scope.dir, 'files'), PASSWORD_COST: '14', ...env }),
    listening: (port) => new RegExp(`PIM example listening on http://127\\.0\\.0\\.1:${port} `),
  });
}

/** Whether something accepts connections on the port of 127.0.0.1. */
const listens = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => socket.destroy() && resolve(true));
    socket.once('error', () => resolve(false));
  });

/** Runs a command to its end (at most `ms`), with the output it wrote. */
function run(command: string, args: string[], env: Record<string, string>, ms = 60_000) {
  const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const ended = new Promise<{ code: number | null; output: string }>((resolve) => child.once('exit', (code) => resolve({ code, output })));
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  return { child, ended: ended.finally(() => clearTimeout(timer)), output: () => output };
}

const sqlite = (name: string) => `sqlite:${path.join(scope.dir, name)}`;

describe('examples/pim start-up', () => {
  it('makes ADMIN_PASSWORD the admin password also when the admin exists, and says so once', async () => {
    const env = { DATABASE_URL: sqlite('admin.sqlite'), ADMIN_PASSWORD: 'first-password' };
    await scope.stop(await startPim(env));
    const changed = await startPim({ ...env, ADMIN_PASSWORD: 'second-password' });
    expect(changed.output()).toContain("Set the password of user 'admin' from ADMIN_PASSWORD.");
    expect((await signIn(changed.url, 'admin', 'second-password')).status).toBe(200);
    expect((await signIn(changed.url, 'admin', 'first-password')).status).toBe(401);
    await scope.stop(changed);
    const same = await startPim({ ...env, ADMIN_PASSWORD: 'second-password' });
    expect(same.output()).not.toMatch(/password/i);
    await scope.stop(same);
  });

  it.each(TEST_DBS)('makes the ADMIN_USERNAME user an active admin again when ADMIN_PASSWORD is set: a demoted admin, an existing ordinary user (%s)', async (kind) => {
    const db = await durableDatabase(kind);
    try {
      await adminRestoredOn(db.url);
    } finally {
      await db.drop();
    }
  });

  /** The admin restored by a start on the database at `url`: demoted by itself first, then an ordinary user named as the admin. */
  async function adminRestoredOn(url: string): Promise<void> {
    const env = { DATABASE_URL: url, ADMIN_PASSWORD: 'admin-password' };
    const first = await startPim(env);
    const token = ((await (await signIn(first.url, 'admin', 'admin-password')).json()) as { authorizationToken: string }).authorizationToken;
    const call = (method: string, url: string, body: unknown) =>
      fetch(`${first.url}${url}`, { method, headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect((await call('POST', '/api/User', { userName: 'ed', password: 'ed-password' })).status).toBe(200);
    const me = (await (await fetch(`${first.url}/api/v1/App/user`, { headers: { 'Authorization-Token': token } })).json()) as { user: { id: string } };
    // The only admin demotes itself: the instance has no admin left.
    expect((await call('PATCH', `/api/User/${me.user.id}`, { isAdmin: false })).status).toBe(200);
    await scope.stop(first);

    const isAdmin = async (url: string, userName: string, password: string) => {
      const res = await fetch(`${url}/api/userSession`, { headers: { Authorization: `Basic ${Buffer.from(`${userName}:${password}`).toString('base64')}` } });
      return ((await res.json()) as { user: { isAdmin: boolean } }).user.isAdmin;
    };
    const restored = await startPim(env);
    expect(restored.output()).toContain("Made user 'admin' an active admin again (ADMIN_PASSWORD is set).");
    expect(restored.output()).not.toContain('Set the password');
    expect(await isAdmin(restored.url, 'admin', 'admin-password')).toBe(true);
    await scope.stop(restored);

    // An ordinary user named as the admin becomes the admin, with the password given.
    const named = await startPim({ ...env, ADMIN_USERNAME: 'ed', ADMIN_PASSWORD: 'ed-admin-password' });
    expect(named.output()).toContain("Made user 'ed' an active admin again (ADMIN_PASSWORD is set).");
    expect(named.output()).toContain("Set the password of user 'ed' from ADMIN_PASSWORD.");
    expect(await isAdmin(named.url, 'ed', 'ed-admin-password')).toBe(true);
    await scope.stop(named);

    // Without ADMIN_PASSWORD a start changes no existing user.
    const plain = await startPim({ DATABASE_URL: env.DATABASE_URL, ADMIN_USERNAME: 'ed' });
    expect(plain.output()).not.toMatch(/admin again|password/i);
    await scope.stop(plain);
  }

  it('stops with a message and exit code 1 when it cannot listen', async () => {
    const first = await startPim({ DATABASE_URL: sqlite('taken.sqlite'), ADMIN_PASSWORD: 'pim-start-password' });
    const port = new URL(first.url).port;
    for (const env of [{ PORT: port, HOST: '127.0.0.1' }, { PORT: String(await freePort()), HOST: 'no-such-host.invalid' }]) {
      const second = run('node', [SERVER], { ...env, DATABASE_URL: sqlite('second.sqlite'), STORAGE_DIR: path.join(scope.dir, 'files2') });
      const { code, output } = await second.ended;
      expect(code).toBe(1);
      expect(output).toMatch(/Cannot listen on /);
      expect(output).not.toMatch(/PIM example listening/);
    }
    await scope.stop(first);
  });

  it('stops with a message and exit code 1 when its database is down at start', async () => {
    // PostgreSQL: nothing listens on the port. SQLite: the file's folder cannot be made (a file is in the way).
    fs.writeFileSync(path.join(scope.dir, 'not-a-folder'), '');
    const urls = [`postgres://postgres@127.0.0.1:${await freePort()}/nowhere`, `sqlite:${path.join(scope.dir, 'not-a-folder', 'pim.sqlite')}`];
    for (const url of urls) {
      const started = run('node', [SERVER], { DATABASE_URL: url, PORT: String(await freePort()), HOST: '127.0.0.1', STORAGE_DIR: path.join(scope.dir, 'files-down') });
      const { code, output } = await started.ended;
      expect({ url, code }).toEqual({ url, code: 1 });
      expect(output).toMatch(/The PIM example could not start: .*(ECONNREFUSED|EEXIST|ENOTDIR)/);
      expect(output).not.toMatch(/PIM example listening/);
    }
  });

  if (TEST_DBS.includes('postgres')) {
    it('answers /health with 503 and Retry-After once its database is gone', async () => {
      const db = await createTestDatabase('postgres');
      try {
        const server = await startPim({ DATABASE_URL: db.url, ADMIN_PASSWORD: 'pim-start-password' });
        expect((await fetch(`${server.url}/health`)).status).toBe(200);
        await db.drop();
        const res = await fetch(`${server.url}/health`);
        expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toEqual({ status: 503, retryAfter: '5', body: { status: 'unavailable' } });
        const api = await fetch(`${server.url}/api/Brand`, { headers: { 'Authorization-Token': 'x' } });
        expect({ status: api.status, retryAfter: api.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
      } finally {
        await db.drop();
      }
    });
  }

  it('names the address it listens on at start-up, and the public URL beside it when PUBLIC_URL differs', async () => {
    const server = await scope.start({
      env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', STORAGE_DIR: path.join(scope.dir, 'files'), DATABASE_URL: 'sqlite::memory:', ADMIN_PASSWORD: 'public-url-admin', PUBLIC_URL: 'https://pim.example.test/sub/' }),
      listening: (port) => new RegExp(`PIM example listening on http://127\\.0\\.0\\.1:${port}, public URL https://pim\\.example\\.test/sub \\(API docs: https://pim\\.example\\.test/sub/apidocs/\\)`),
    });
    expect((await signIn(server.url, 'admin', 'public-url-admin')).status).toBe(200);
    await scope.stop(server);
  });

  it('refuses a limit in the environment that is not a whole number, naming it', async () => {
    const started = run('node', [SERVER], { DATABASE_URL: sqlite('limits.sqlite'), PORT: String(await freePort()), MAX_UPSERT_ITEMS: 'lots' });
    const { code, output } = await started.ended;
    expect(code).toBe(1);
    expect(output).toContain("The PIM example could not start: MAX_UPSERT_ITEMS must be a whole number, not 'lots'");
  });

  it('hashes passwords at the cost PASSWORD_COST names, and refuses a cost out of range', async () => {
    const file = path.join(scope.dir, 'cost.sqlite');
    const server = await startPim({ DATABASE_URL: `sqlite:${file}`, ADMIN_PASSWORD: 'pim-cost-password', PASSWORD_COST: '15' });
    expect((await signIn(server.url, 'admin', 'pim-cost-password')).status).toBe(200);
    await scope.stop(server);
    const db = new Database(file, { readonly: true });
    try {
      const { password } = db.prepare(`select password from "user" where user_name = 'admin'`).get() as { password: string };
      expect(password.split('$').slice(0, 4)).toEqual(['scrypt', String(2 ** 15), '8', '1']);
    } finally {
      db.close();
    }
    for (const cost of ['13', '21', 'high']) {
      const started = run('node', [SERVER], { DATABASE_URL: sqlite(`cost-${cost}.sqlite`), PORT: String(await freePort()), PASSWORD_COST: cost });
      const { code, output } = await started.ended;
      expect({ cost, code }).toEqual({ cost, code: 1 });
      expect(output).toMatch(cost === 'high' ? /could not start: PASSWORD_COST must be a whole number, not 'high'/ : /could not start: .*passwordCost/);
    }
  });

  it('answers paths outside the API, and URLs over its header limit, with the JSON error body', async () => {
    const server = await startPim({ DATABASE_URL: sqlite('paths.sqlite'), ADMIN_PASSWORD: 'pim-start-password' });
    const res = await fetch(`${server.url}/no/such/page`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'CORE_NOT_FOUND', message: 'No such route', details: {} } });
    const token = ((await (await signIn(server.url, 'admin', 'pim-start-password')).json()) as { authorizationToken: string }).authorizationToken;
    const where = (count: number) => encodeURIComponent(JSON.stringify([{ type: 'in', attribute: 'name', value: Array.from({ length: count }, (_, i) => `v${i}`) }]));
    // 10,001 values fit the URL limit, and meet the limit of where (400)
    const many = await fetch(`${server.url}/api/Product?where=${where(10_001)}`, { headers: { 'Authorization-Token': token } });
    expect(many.status).toBe(400);
    expect(((await many.json()) as { error: { message: string } }).error.message).toBe('where must not hold more than 10000 values');
    // beyond 256 KiB of URL and headers: 431 with the JSON body
    const huge = await fetch(`${server.url}/api/Product?where=${where(40_000)}`, { headers: { 'Authorization-Token': token } });
    expect(huge.status).toBe(431);
    expect(huge.headers.get('x-status-reason')).toBe('The URL and headers are larger than the server accepts');
    expect(await huge.json()).toEqual({ error: { code: 'CORE_HEADERS_TOO_LARGE', message: 'The URL and headers are larger than the server accepts', details: {} } });
    // not HTTP that the parser takes: 400 with the JSON body too
    for (const raw of ['FOO /api/Product HTTP/1.1\r\nHost: x\r\n\r\n', 'POST /api/Brand HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']) {
      const answer = await rawRequest(server.url, raw);
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(answer).toContain('X-Status-Reason: The request is not well-formed HTTP');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'CORE_MALFORMED_REQUEST', message: 'The request is not well-formed HTTP', details: {} } });
    }
    await scope.stop(server);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('npm start stops the server on %s sent to npm', async (signal) => {
    const port = await freePort();
    const env = { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: sqlite(`npm-${signal}.sqlite`), STORAGE_DIR: path.join(scope.dir, 'files3'), ADMIN_PASSWORD: 'pim-start-password' };
    const npm = run('npm', ['start'], env);
    const deadline = Date.now() + 90_000;
    while (!npm.output().includes('PIM example listening') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await listens(port)).toBe(true);
    npm.child.kill(signal);
    await npm.ended;
    const freed = Date.now() + 10_000;
    while ((await listens(port)) && Date.now() < freed) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await listens(port)).toBe(false);
  });
});

/** What the server answers to bytes sent as they are on one connection (it closes it). */
function rawRequest(url: string, raw: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
  });
}
