import { spawnSync } from 'node:child_process';
import path from 'node:path';

// Tests run through ts-jest with isolated modules (no type checking, for speed): the whole
// repository — sources, tests, bench and examples — is type-checked here once instead.
jest.setTimeout(180_000);
const ROOT = path.join(__dirname, '..');

it('type-checks every source, test and bench file', () => {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--pretty', 'false'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const errors = run.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
  expect(errors).toEqual([]);
  expect(run.status).toBe(0);
});
