import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, ROOT } from '../support/child-server';
import { curlProblems, documentationFiles, samplesOf, type Sample } from './samples';

// Every TypeScript sample of the documentation is type-checked as a user's ES module project
// would (module NodeNext) against the built packages; partial ones say why they are not.
jest.setTimeout(300_000);

/** What `<!-- sample: uses … -->` gives a sample: an instance of the getting-started entities. */
const PRELUDE = `import express from 'express';
import { createEntityApi, defineEntity, definePlugin, systemContext, type PluginApi, type RequestContext } from '@entity-records/core';

export const Brand = defineEntity({
  name: 'Brand',
  fields: { name: { type: 'varchar', required: true, unique: true }, products: { type: 'linkMultiple', entity: 'Product', foreign: 'brand' } },
});
export const Product = defineEntity({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true },
    sku: { type: 'varchar', unique: true },
    price: { type: 'float', min: 0 },
    isActive: { type: 'bool', default: true },
    brand: { type: 'link', entity: 'Brand' },
  },
});
export const api = createEntityApi({ database: 'sqlite::memory:', entities: [Brand, Product] });
export const app = express();
export const server = app.listen(0);
export const token: string = process.env.TOKEN ?? '';
export const ctx: RequestContext = systemContext();
export const Category = defineEntity({ name: 'Category', fields: { name: { type: 'varchar', required: true, isMultilang: true } } });
export const Article = defineEntity({ name: 'Article', fields: { title: { type: 'varchar', required: true } } });
export const entities = [Brand, Product, Category];
export const database = 'sqlite::memory:';
/** The API a plugin's setup gets. */
export declare const setupApi: PluginApi;
export const auditPlugin = definePlugin({ name: 'audit', setup() {} });
export const slugs = definePlugin<{ maxLength?: number } | undefined>({ name: 'slugs', setup() {} });
export declare const rates: { get(currency?: string): Promise<number> };
export declare const bytes: Buffer;
export const BASE = 'http://127.0.0.1:3000';
export const headers = { 'Authorization-Token': token, 'Content-Type': 'application/json' };
`;

const all = documentationFiles(ROOT).flatMap(samplesOf);
const typescript = all.filter((s) => s.lang === 'ts' || s.lang === 'typescript');
const where = (s: Sample) => `${path.relative(ROOT, s.file)}:${s.line}`;

it('gives every partial TypeScript sample a reason', () => {
  const partial = typescript.filter((s) => s.partial !== undefined);
  expect(partial.filter((s) => (s.partial ?? '').length < 12).map(where)).toEqual([]);
  // Most samples compile; a partial one is the exception.
  expect(partial.length).toBeLessThan(typescript.length / 3);
});

it('type-checks every other TypeScript sample against the packages, as ES modules', () => {
  ensureBuilt(path.join(ROOT, 'packages/core/dist/index.d.ts'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-doc-samples-'));
  try {
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'doc-samples', private: true, type: 'module' }));
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', moduleDetection: 'force', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['**/*.ts'] }));
    fs.writeFileSync(path.join(dir, 'prelude.ts'), PRELUDE);
    const origin = new Map<string, { sample: Sample; offset: number }>();
    for (const sample of typescript.filter((s) => s.partial === undefined)) {
      const folder = path.join(dir, path.relative(ROOT, sample.file).replace(/[/.]/g, '_'));
      fs.mkdirSync(folder, { recursive: true });
      // `// entities.ts` on the first line names the file, so that a later sample can import it.
      const named = /^\/\/ ([\w-]+\.ts)\s*$/.exec(sample.code.split('\n')[0])?.[1];
      const file = path.join(folder, named ?? `line-${sample.line}.ts`);
      const header = sample.uses.length ? `import { ${sample.uses.join(', ')} } from '../prelude.js';\n` : '';
      fs.writeFileSync(file, header + sample.code + '\n');
      origin.set(path.relative(dir, file), { sample, offset: header ? 1 : 0 });
    }
    const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir, '--pretty', 'false'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const errors = run.stdout
      .split('\n')
      .filter((line) => /error TS\d+/.test(line))
      .map((line) => {
        const match = /^(.+?)\((\d+),\d+\): (.*)$/.exec(line);
        const found = match && origin.get(match[1]);
        return found && match ? `${where(found.sample)} (+${Number(match[2]) - found.offset}): ${match[3]}` : line;
      });
    expect(errors).toEqual([]);
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
