import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEntityApi, type EntityApiOptions } from '@entity-records/core';
import { formatSteps } from '../src/cli';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../test/support/databases';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'packages/core/dist/cli.js');

let dir: string;
beforeAll(() => {
  if (!fs.existsSync(CLI)) execFileSync('npx', ['tsc', '-b', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-cli-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const run = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Writes a CommonJS config module into the temporary folder; returns its name relative to it. */
function configModule(name: string, source: string): string {
  fs.writeFileSync(path.join(dir, name), source);
  return name;
}

const note = (fields: Record<string, unknown>) => ({ name: 'Note', fields: { title: { type: 'varchar', required: true }, ...fields } });

describe('entity-records command line', () => {
  it('prints its usage for --help and exits 0', () => {
    const run = cli('--help');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: entity-records schema-diff --config <module>/);
  });

  it.each([
    [[], /No command given/],
    [['schema-up'], /Unknown command 'schema-up'/],
    [['schema-diff'], /schema-diff needs --config <module>/],
    [['schema-diff', '--config'], /--config needs a module path/],
    [['schema-diff', '--config', 'x.js', '--dry'], /Unknown argument '--dry'/],
  ])('exits 2 with usage for arguments %j', (args, message) => {
    const run = cli(...args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain('Usage: entity-records schema-diff');
    expect(run.stdout).toBe('');
  });

  it('exits 2 for a config module that is missing, broken or exports no options', () => {
    const missing = cli('schema-diff', '--config', 'nope.js');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`Config module 'nope.js' not found (looked for ${path.join(dir, 'nope.js')})`);
    const broken = cli('schema-diff', `--config=${configModule('broken.js', 'throw new Error("no DATABASE_URL")')}`);
    expect(broken.status).toBe(2);
    expect(broken.stderr).toContain("Config module 'broken.js' failed to load: no DATABASE_URL");
    const empty = cli('schema-diff', '--config', configModule('empty.js', 'module.exports = { port: 3000 }'));
    expect(empty.status).toBe(2);
    expect(empty.stderr).toContain("Config module 'empty.js' exports no entity API options");
  });

  it('prints a database URL without its password', () => {
    const steps = [{ description: 'create table a', sql: 'create table "a" ("id" int)' }];
    expect(formatSteps(steps, 'postgres://app:s3cret@db.local:5432/pim')).toBe(
      '-- 1 step to bring postgres://app:***@db.local:5432/pim in step with the definitions\n\n-- 1. create table a\ncreate table "a" ("id" int);\n',
    );
  });

  it('reads an ES module config, even one with top-level await', () => {
    const options = { database: `sqlite:${path.join(dir, 'esm.sqlite')}`, entities: [note({})] };
    const source = `const options = await Promise.resolve(${JSON.stringify(options)});\nexport default options;\n`;
    const run = cli('schema-diff', '--config', configModule('esm.mjs', source));
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('create table "note"');
  });

  it('exits 1 naming entity and field when a definition is invalid', () => {
    const options = { database: `sqlite:${path.join(dir, 'bad.sqlite')}`, entities: [note({ size: { type: 'enum' } })] };
    const run = cli('schema-diff', '--config', configModule('bad.js', `module.exports = ${JSON.stringify({ options })}`));
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("CORE_DEFINITION_INVALID: entity 'Note', field 'size': type enum needs options");
  });
});

describe.each(TEST_DBS)('entity-records schema-diff on %s', (kind) => {
  let db: TestDatabase;
  beforeEach(async () => {
    db =
      kind === 'postgres'
        ? await createTestDatabase(kind)
        : { kind, url: `sqlite:${path.join(dir, `${Date.now()}-${Math.random()}.sqlite`)}`, drop: async () => undefined };
  });
  afterEach(() => db.drop());

  it('prints every planned step, then nothing once the schema is synced, then what a grown definition adds', async () => {
    const v1: EntityApiOptions = { database: db.url, entities: [note({})] as EntityApiOptions['entities'] };
    // default export of a function, as TypeScript compiles `export default function`
    const first = cli('schema-diff', '--config', configModule('v1.js', `exports.default = async () => (${JSON.stringify(v1)});`));
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^-- \d+ steps to bring .* in step with the definitions\n/);
    expect(first.stdout).toContain('\n-- 1. create table user\ncreate table "user" (');
    expect(first.stdout).toMatch(/\n-- \d+\. create table note\ncreate table "note" \("id" varchar\(64\) not null primary key, "title" varchar\(255\),/);

    const api = createEntityApi(v1);
    expect(first.stdout.match(/^-- \d+\. /gm)).toHaveLength((await api.schemaDiff()).length);
    await api.ready();
    await api.close();
    const synced = cli('schema-diff', '--config', 'v1.js');
    expect(synced).toEqual({ status: 0, stdout: 'Schema is up to date.\n', stderr: '' });

    const v2 = { ...v1, entities: [note({ body: { type: 'text' } })] };
    const grown = cli('schema-diff', '--config', configModule('v2.js', `exports.options = ${JSON.stringify(v2)};`));
    expect(grown.status).toBe(0);
    expect(grown.stdout).toBe(
      `-- 1 step to bring ${db.url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')} in step with the definitions\n\n` +
        '-- 1. add column note.body\nalter table "note" add column "body" text;\n',
    );
  });
});
