import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createEntityApi } from '@entity-records/core';
import { readConfig } from '../../examples/pim/src/config';
import { pimOptions } from '../../examples/pim/src/options';

// Two third-party linters read the example's document (every package composed, a host route);
// both run offline from node_modules.
jest.setTimeout(180_000);
const ROOT = path.join(__dirname, '..', '..');
let dir: string;
let file: string;
let document: Record<string, unknown>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-openapi-lint-'));
  const api = createEntityApi(pimOptions({ ...readConfig({ LOG_LEVEL: 'silent' }), databaseUrl: 'sqlite::memory:', storageDir: path.join(dir, 'files') }));
  document = api.openapi();
  await api.close();
  file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(document, null, 1));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function run(bin: string, args: string[]) {
  return spawnSync(process.execPath, [path.join(ROOT, 'node_modules', bin), ...args], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
}

it('passes @redocly/cli lint with the recommended rules: no error, no warning', () => {
  const result = run('@redocly/cli/bin/cli.js', ['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json']);
  const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[] };
  expect(report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
  expect(result.status).toBe(0);
});

it('passes Spectral with spectral:oas: no error, no warning', () => {
  const result = run('@stoplight/spectral-cli/dist/index.js', ['lint', file, '--ruleset', path.join(ROOT, '.spectral.yaml'), '--format', 'json', '--quiet']);
  const results = JSON.parse(result.stdout.trim() || '[]') as { code: string; severity: number; message: string; path: string[] }[];
  expect(results.map((r) => `${r.severity} ${r.code} ${r.path.join('.')}: ${r.message}`)).toEqual([]);
});

// The liveness probe and the public data take no input and need no token: no client error to document.
const NO_CLIENT_ERROR = new Set(['/health', '/data/publicData.json']);

it('documents a 4xx answer on every operation but those taking no input (the rule redocly.yaml turns off)', () => {
  const missing: string[] = [];
  for (const [p, item] of Object.entries(document.paths as Record<string, Record<string, { responses?: Record<string, unknown> }>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (NO_CLIENT_ERROR.has(p) || !operation.responses) continue;
      if (!Object.keys(operation.responses).some((status) => status.startsWith('4'))) missing.push(`${method} ${p}`);
    }
  }
  expect(missing).toEqual([]);
});

it('lists every error code as the enum of Error.code', () => {
  const error = (document.components as { schemas: Record<string, { properties: { error: { properties: { code: { enum: string[] } } } } }> }).schemas.Error;
  expect(error.properties.error.properties.code.enum).toEqual(expect.arrayContaining(['CORE_INVALID_JSON', 'CORE_NOT_FOUND', 'FILES_CHUNK_CONFLICT', 'SHARING_EXPIRED']));
});
