import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import { createPim } from '../../examples/pim/src/app';
import { readConfig } from '../../examples/pim/src/config';

// CONTRACT.md §12: "a client generated from it works". Types are generated from the document the
// PIM example serves (openapi-typescript), a client written against them (client/pim-client.ts)
// must type-check, and then run against that server (openapi-fetch).
jest.setTimeout(180_000);
const ROOT = path.join(__dirname, '..', '..');
const CLIENT_DIR = path.join(__dirname, 'client');
const ADMIN = { userName: 'admin', password: 'generated-client-pass' };
type Exercise = (baseUrl: string, admin: typeof ADMIN) => Promise<Record<string, unknown>>;

describe('a client generated from the OpenAPI document', () => {
  let server: Server;
  let close: () => Promise<void>;
  let baseUrl: string;
  let storage: string;

  beforeAll(async () => {
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'er-client-'));
    const config = { ...readConfig({ LOG_LEVEL: 'silent' }), databaseUrl: 'sqlite::memory:', storageDir: storage, adminPassword: ADMIN.password, demoData: false };
    const pim = await createPim(config);
    server = await new Promise<Server>((resolve) => {
      const s = pim.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = async () => {
      await new Promise((resolve) => server.close(resolve));
      await pim.api.close();
    };
  });
  afterAll(async () => {
    await close();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  it('type-checks against the generated types and works against the server', async () => {
    const documentFile = path.join(storage, 'openapi.json');
    fs.writeFileSync(documentFile, await (await fetch(`${baseUrl}/apidocs/openapi.json`)).text());
    // The generator is an ES module: its own command line runs it outside jest's module system.
    const run = (bin: string, args: string[]) => spawnSync(process.execPath, [path.join(ROOT, 'node_modules', ...bin.split('/')), ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    // '--default-non-nullable false': a request field with a default may be left out (the server fills it in).
    const generated = run('openapi-typescript/bin/cli.js', [documentFile, '--default-non-nullable', 'false', '--output', path.join(CLIENT_DIR, 'pim-api.d.ts')]);
    expect(generated.status).toBe(0);

    const tsc = run('typescript/bin/tsc', ['-p', path.join(CLIENT_DIR, 'tsconfig.json'), '--pretty', 'false']);
    expect(tsc.stdout.split('\n').filter((line) => /error TS\d+/.test(line))).toEqual([]);
    expect(tsc.status).toBe(0);

    // A path TypeScript does not follow, and a type of our own: the repository's own type check
    // runs on a fresh checkout, where the generated file does not exist yet.
    const { exercise } = (await import(path.join(CLIENT_DIR, 'pim-client'))) as { exercise: Exercise };
    const result = await exercise(baseUrl, ADMIN);
    expect(result.brand).toMatchObject({ name: 'Generated', code: 'GEN' });
    expect(result.product).toMatchObject({ name: 'Typed', sku: 'T-1', price: 2.5, quantity: 3, brandName: 'Generated' });
    expect(result.updated).toMatchObject({ price: 3.5 });
    expect(result.patched).toMatchObject({ price: 3.5, isActive: false });
    expect(result.list).toMatchObject({ total: 1, list: [{ name: 'Typed', price: 3.5, brandName: 'Generated' }] });
    expect(result.german).toMatchObject({ name: 'Typed', _meta: { permissions: { edit: true, delete: true, stream: true } } });
    expect(result.upsert).toEqual([expect.objectContaining({ status: 'Updated', stored: true, entity: expect.objectContaining({ code: 'GEN-2' }) })]);
    expect(result.missing).toMatchObject({ status: 404, error: { error: { code: 'CORE_NOT_FOUND' } } });
    expect(result.removed).toBe(true);
  });
});
