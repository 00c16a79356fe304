import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, ROOT } from '../support/child-server';
import { compileErrors, writeSampleProject } from './sample-project';
import { curlProblems } from './curl-check';
import { documentationFiles, samplesOf, type Sample } from './samples';

// Every TypeScript and JavaScript sample of the documentation is type-checked as a user's ES
// module project would (module NodeNext) against the built packages (sample-project.ts); the
// `<!-- sample: … -->` directives (samples.ts) give it its setting.
jest.setTimeout(300_000);

const all = documentationFiles(ROOT).flatMap(samplesOf);
const code = all.filter((s) => ['ts', 'typescript', 'js', 'javascript'].includes(s.lang));
const where = (s: Sample) => `${path.relative(ROOT, s.file)}:${s.line}`;

it('understands every sample directive of the documentation', () => {
  expect(all.flatMap((s) => s.unknown.map((text) => `${where(s)}: ${text}`))).toEqual([]);
});

it('compiles every TypeScript and JavaScript sample against the packages, as ES modules (browser ones with the DOM library)', async () => {
  ensureBuilt(path.join(ROOT, 'packages/core/dist/index.d.ts'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-doc-samples-'));
  try {
    const origins = await writeSampleProject(dir, code);
    expect(code.filter((s) => s.browser).length).toBeGreaterThan(0);
    expect([...compileErrors(dir, 'tsconfig.json', origins, where), ...compileErrors(dir, 'tsconfig.browser.json', origins, where)]).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('shows in the README exactly the starter\'s server', () => {
  const readme = samplesOf(path.join(ROOT, 'README.md')).find((s) => s.lang === 'ts');
  expect(`${readme?.code}\n`).toBe(fs.readFileSync(path.join(ROOT, 'examples/starter/src/server.ts'), 'utf8'));
});

it('writes curl commands that show their errors and do not glob their URLs', () => {
  const shell = all.filter((s) => ['sh', 'bash', 'shell', 'console'].includes(s.lang));
  expect(shell.flatMap((s) => curlProblems(s.code).map((p) => `${where(s)}: ${p}`))).toEqual([]);
});

it('writes JSON samples that parse, unless they elide with …', () => {
  const json = all.filter((s) => s.lang === 'json' && !/…|\.\.\.|\/\//.test(s.code));
  expect(json.flatMap((s) => {
    try {
      JSON.parse(s.code);
      return [];
    } catch (error) {
      return [`${where(s)}: ${(error as Error).message}`];
    }
  })).toEqual([]);
});
