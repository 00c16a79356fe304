import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from '../support/child-server';
import { starterLock } from '../support/starter-lock';

// Packs every package, installs examples/starter from the tarballs in a temporary folder without
// the network (npm's cache holds what `npm ci` fetched), starts it with tsx, signs in, lists.
// Install scripts do not run there: the one that matters, better-sqlite3's build from source, is
// the one the repository's own `npm ci` ran, for the same version and Node; its binary is copied
// instead of compiled again (a minute of CPU).
jest.setTimeout(900_000);
const PACKAGES = ['core', 'files', 'sharing', 'multilang', 'meta'];
let dir: string;
let app: string;
const tarballs: Record<string, string> = {};

function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }) {
  const result = spawnSync(command, args, { cwd: options.cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...options.env } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-starter-'));
  run('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  for (const name of PACKAGES) {
    const [packed] = JSON.parse(run('npm', ['pack', '-w', `packages/${name}`, '--pack-destination', dir, '--json'], { cwd: ROOT })) as { filename: string }[];
    tarballs[`@entity-records/${name}`] = path.join(dir, packed.filename);
  }
  app = path.join(dir, 'app');
  fs.cpSync(path.join(ROOT, 'examples', 'starter'), app, { recursive: true, filter: (file) => !/node_modules|[/\\]data$/.test(file) });
  const manifest = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
  // The starter as a user would have it once the packages are published, but from the tarballs;
  // the plugins too, to load each package both ways.
  manifest.dependencies = { ...manifest.dependencies, ...Object.fromEntries(Object.entries(tarballs).map(([name, file]) => [name, `file:${file}`])) };
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.writeFileSync(path.join(app, 'package-lock.json'), JSON.stringify(starterLock({ root: ROOT, app: manifest, tarballs, registry: run('npm', ['config', 'get', 'registry'], { cwd: ROOT }).trim() }), null, 2));
  run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: app });
  const sqliteBuild = path.join('node_modules', 'better-sqlite3', 'build', 'Release');
  fs.mkdirSync(path.join(app, sqliteBuild), { recursive: true });
  fs.copyFileSync(path.join(ROOT, sqliteBuild, 'better_sqlite3.node'), path.join(app, sqliteBuild, 'better_sqlite3.node'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('packs each package with its build, types and README, and nothing else', () => {
  for (const name of PACKAGES) {
    const listed = run('tar', ['tzf', tarballs[`@entity-records/${name}`]], { cwd: dir }).split('\n').filter(Boolean);
    expect(listed).toEqual(expect.arrayContaining(['package/package.json', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts']));
    if (name !== 'core') expect(listed).toEqual(expect.arrayContaining(['package/esm/index.mjs', 'package/esm/index.d.mts']));
    expect(listed.filter((file) => /\/(src|test)\/|\.test\.|tsbuildinfo/.test(file))).toEqual([]);
  }
});

it('loads every package through require and through import, the plugins as their default export', () => {
  const cjs = run(process.execPath, ['-e', `
    const core = require('@entity-records/core');
    const names = ${JSON.stringify(PACKAGES.slice(1))}.map((p) => require('@entity-records/' + p).default.name);
    console.log(JSON.stringify([typeof core.createEntityApi, typeof require('@entity-records/core/plugin').definePlugin, ...names]));`], { cwd: app });
  expect(JSON.parse(cjs)).toEqual(['function', 'function', '@entity-records/files', '@entity-records/sharing', '@entity-records/multilang', '@entity-records/meta']);
  const esm = run(process.execPath, ['--input-type=module', '-e', `
    import { createEntityApi } from '@entity-records/core';
    import files from '@entity-records/files';
    import sharing from '@entity-records/sharing';
    import multilang from '@entity-records/multilang';
    import meta from '@entity-records/meta';
    console.log(JSON.stringify([typeof createEntityApi, files.name, sharing.name, multilang.name, meta.name]));`], { cwd: app });
  expect(JSON.parse(esm)).toEqual(['function', '@entity-records/files', '@entity-records/sharing', '@entity-records/multilang', '@entity-records/meta']);
});

it('type-checks as the user would (module NodeNext), plugins registered with their options', () => {
  fs.writeFileSync(path.join(app, 'src', 'plugins.ts'), [
    "import { createEntityApi, defineEntity } from '@entity-records/core';",
    "import files from '@entity-records/files';",
    "import sharing from '@entity-records/sharing';",
    "const Note = defineEntity({ name: 'Note', fields: { title: { type: 'varchar', required: true } } });",
    "export const api = createEntityApi({ database: 'sqlite::memory:', entities: [Note], plugins: [[files, { storageDir: 'data/files' }], sharing] });",
    "export const title: Promise<string> = api.repository('Note').create({ variables: {} }, { title: 'x' }).then((n) => n.title);",
    '',
  ].join('\n'));
  run(process.execPath, [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', '.'], { cwd: app });
  fs.rmSync(path.join(app, 'src', 'plugins.ts'));
});

it('starts with its dev command (tsx), signs the admin in and lists records', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(app, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'src/server.ts'], {
    cwd: app,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), ADMIN_PASSWORD: 'starter-password' },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  try {
    for (let i = 0; i < 600 && !output.includes(`Listening on http://127.0.0.1:${port}`); i++) {
      if (child.exitCode !== null) throw new Error(`the starter stopped: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(output).toContain(`Listening on http://127.0.0.1:${port}`);
    const base = `http://127.0.0.1:${port}`;
    const signIn = await fetch(`${base}/api/userSession`, { headers: { Authorization: `Basic ${Buffer.from('admin:starter-password').toString('base64')}`, 'Authorization-Token-Only': 'true' } });
    expect(signIn.status).toBe(200);
    const { authorizationToken } = (await signIn.json()) as { authorizationToken: string };
    const headers = { 'Authorization-Token': authorizationToken, 'Content-Type': 'application/json' };
    expect((await fetch(`${base}/api/Brand`, { method: 'POST', headers, body: JSON.stringify({ name: 'Acme' }) })).status).toBe(200);
    const list = (await (await fetch(`${base}/api/v1/Brand?select=name`, { headers })).json()) as { total: number; list: { name: string }[] };
    expect(list).toMatchObject({ total: 1, list: [{ name: 'Acme' }] });
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
  }
});
