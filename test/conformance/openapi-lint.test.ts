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

type Run = ReturnType<typeof run>;

/** Why a linter's run tells nothing: it stopped (status, signal, its stderr) or printed no JSON. */
function notRun(name: string, result: Run, why: string): Error {
  return new Error(`${name} did not run to the end (${why}; status ${result.status}, signal ${result.signal}): ${(result.stderr ?? '').slice(-2000)}${result.error?.message ?? ''}`);
}

/** The JSON a linter printed, or an error saying why there is none (a crash prints nothing). */
function jsonOf<T>(name: string, result: Run, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw notRun(name, result, `output is not JSON: ${(error as Error).message}`);
  }
}

/**
 * Redocly's problems, one line each. Status 0 means no error (warnings do not change it), 1 that
 * it found errors; anything else, or output that is not its report, is a failure of the check
 * itself. The totals catch a report cut short (--max-problems).
 */
function redoclyProblems(result: Run): string[] {
  if (result.status !== 0 && result.status !== 1) throw notRun('Redocly', result, 'unexpected status');
  const start = result.stdout.indexOf('{');
  if (start < 0) throw notRun('Redocly', result, 'no report on stdout');
  const report = jsonOf<{ totals?: { errors: number; warnings: number }; problems?: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[] }>('Redocly', result, result.stdout.slice(start));
  if (!report.totals || !Array.isArray(report.problems)) throw notRun('Redocly', result, 'report without totals or problems');
  const lines = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
  const counted = report.totals.errors + report.totals.warnings;
  if (counted > lines.length) lines.push(`${counted - lines.length} more problems not listed`);
  if (result.status === 1 && lines.length === 0) throw notRun('Redocly', result, 'failed without a problem');
  return lines;
}

/**
 * Spectral's results, one line each. It runs with --fail-severity hint, so status 0 means no
 * result at all and 1 that there are some; 2 (a missing ruleset, a crash) or output that is not a
 * JSON array is a failure of the check itself, never a pass.
 */
function spectralProblems(result: Run): string[] {
  if (result.status !== 0 && result.status !== 1) throw notRun('Spectral', result, 'unexpected status');
  const results = jsonOf<{ code: string; severity: number; message: string; path: string[] }[]>('Spectral', result, result.stdout);
  if (!Array.isArray(results)) throw notRun('Spectral', result, 'output is not a list');
  const lines = results.map((r) => `${r.severity} ${r.code} ${r.path.join('.')}: ${r.message}`);
  if ((result.status === 1) !== lines.length > 0) throw notRun('Spectral', result, `status disagrees with ${lines.length} results`);
  return lines;
}

const redocly = (config: string) => run('@redocly/cli/bin/cli.js', ['lint', file, '--config', config, '--format', 'json']);
const spectral = (ruleset: string) => run('@stoplight/spectral-cli/dist/index.js', ['lint', file, '--ruleset', ruleset, '--format', 'json', '--quiet', '--fail-severity', 'hint']);

it('passes @redocly/cli lint with the recommended rules: no error, no warning', () => {
  const result = redocly(path.join(ROOT, 'redocly.yaml'));
  expect(redoclyProblems(result)).toEqual([]);
  expect(result.status).toBe(0);
});

it('passes Spectral with spectral:oas: no error, no warning, no hint', () => {
  const result = spectral(path.join(ROOT, '.spectral.yaml'));
  expect(spectralProblems(result)).toEqual([]);
  expect(result.status).toBe(0);
});

it('counts a linter that cannot run as a failure, not as a clean document', () => {
  const missing = path.join(dir, 'no-such-ruleset.yaml');
  expect(() => spectralProblems(spectral(missing))).toThrow(/Spectral did not run to the end/);
  expect(() => redoclyProblems(redocly(missing))).toThrow(/Redocly did not run to the end/);
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
