import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The lint rules (eslint.config.mjs) hold the layer rules of DESIGN.md: an error is a failed test.
// ESLint loads its config as an ES module, which jest's sandbox cannot: it runs as a child process.
jest.setTimeout(180_000);
const ROOT = path.join(__dirname, '..');

it('finds no lint errors in the repository', () => {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '.', '--format', 'json'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(run.stderr).toBe('');
  const results = JSON.parse(run.stdout) as { filePath: string; messages: { severity: number; line: number; ruleId: string | null; message: string }[] }[];
  const errors = results.flatMap((r) =>
    r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(ROOT, r.filePath)}:${m.line} ${m.ruleId}: ${m.message}`),
  );
  expect(errors).toEqual([]);
});
