import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEntityApi } from '@entity-records/core';
import { ensureBuilt, ROOT } from '../../../test/support/child-server';
import { readConfig } from '../src/config';
import { pimOptions } from '../src/options';

// Runs npm twice; a busy machine needs more than the default 30 s.
jest.setTimeout(120_000);

let tmp: string;
beforeAll(() => {
  ensureBuilt(path.join(ROOT, 'packages/core/dist/cli.js'));
  ensureBuilt(path.join(ROOT, 'examples/pim/dist/schema-config.js'));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'er-pim-diff-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** `npm run schema:diff -w examples/pim`, as the root script runs it after the build. */
function schemaDiff(databaseUrl: string) {
  const run = spawnSync('npm', ['run', '--silent', 'schema:diff', '-w', 'examples/pim'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('examples/pim schema:diff script', () => {
  it('prints what the server would create, and nothing once the server has synced', async () => {
    const databaseUrl = `sqlite:${path.join(tmp, 'pim.sqlite')}`;
    const fresh = schemaDiff(databaseUrl);
    expect(fresh.status).toBe(0);
    expect(fresh.stdout).toMatch(/^-- \d+ steps to bring sqlite:.*pim\.sqlite in step with the definitions\n/);
    expect(fresh.stdout).toContain('\ncreate table "product" (');
    expect(fresh.stdout).toContain('. unique index uq_product_brand_mpn on product (brand, mpn), live rows\n');
    expect(fresh.stdout).toMatch(/create join table category_products__product_categories\n/);

    // the server's options come from the same function: after its sync the diff is empty
    const api = createEntityApi(pimOptions(readConfig({ DATABASE_URL: databaseUrl })));
    await api.ready();
    await api.close();
    const synced = schemaDiff(databaseUrl);
    expect(synced.status).toBe(0);
    expect(synced.stdout).toBe('Schema is up to date.\n');
  });
});
