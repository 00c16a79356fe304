import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createEntityApi } from '@entity-records/core';
import { ROOT } from '../support/child-server';
import { Brand, Product } from './guide-entities';
import type { Sample } from './samples';

// The documentation's TypeScript and JavaScript samples as a user's ES module project (module
// NodeNext) against the built packages: one project with Node's types, one with the DOM library
// for browser samples (`*.browser.ts`, `*.browser.js`).

/** What `<!-- sample: uses … -->` gives a sample: an instance of the getting-started entities. */
const PRELUDE = `import express from 'express';
import { createEntityApi, defineEntity, definePlugin, systemContext, type PluginApi, type RequestContext } from '@entity-records/core';
import { Brand, Product } from './guide-entities.js';

export { Brand, Product };
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

const BASE_OPTIONS = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', moduleDetection: 'force', strict: true, noEmit: true, skipLibCheck: true, allowJs: true, checkJs: true };
const BROWSER = ['**/*.browser.ts', '**/*.browser.js'];

/** Where a line of a written file comes from: the sample, and how many lines were put before it. */
export type Origins = Map<string, { sample: Sample; offset: number }>;

/** package.json, the two tsconfigs and the prelude of the project in `dir`. */
function writeSetting(dir: string): void {
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'doc-samples', private: true, type: 'module' }));
  const node = { compilerOptions: { ...BASE_OPTIONS, types: ['node'] }, include: ['**/*.ts', '**/*.js'], exclude: ['node_modules', ...BROWSER] };
  const browser = { compilerOptions: { ...BASE_OPTIONS, lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] }, include: BROWSER, exclude: ['node_modules'] };
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(node));
  fs.writeFileSync(path.join(dir, 'tsconfig.browser.json'), JSON.stringify(browser));
  fs.copyFileSync(path.join(__dirname, 'guide-entities.ts'), path.join(dir, 'guide-entities.ts'));
  fs.writeFileSync(path.join(dir, 'prelude.ts'), PRELUDE);
}

/** The file a sample is written to: `// entities.ts` on its first line names it, so that a later sample can import it. */
function fileOf(dir: string, sample: Sample): string {
  const folder = path.join(dir, path.relative(ROOT, sample.file).replace(/[/.]/g, '_'));
  const extension = sample.lang.startsWith('j') ? 'js' : 'ts';
  const named = /^\/\/ ([\w-]+\.[jt]s)\s*$/.exec(sample.code.split('\n')[0])?.[1];
  return path.join(folder, named ?? `line-${sample.line}${sample.browser ? '.browser' : ''}.${extension}`);
}

/** Writes the types openapi-typescript makes from the getting-started instance's document, as the guide does. */
async function writeApiTypes(dir: string, file: string): Promise<void> {
  const document = path.join(dir, 'openapi.json');
  if (!fs.existsSync(document)) {
    const api = createEntityApi({ database: 'sqlite::memory:', entities: [Brand, Product] });
    fs.writeFileSync(document, JSON.stringify(api.openapi()));
    await api.close();
  }
  // The generator is an ES module: its own command line runs it outside jest's module system.
  const cli = path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js');
  const run = spawnSync(process.execPath, [cli, document, '--default-non-nullable', 'false', '-o', file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openapi-typescript failed: ${run.stderr}`);
}

/** Writes the project and every sample into `dir`; answers where each written file comes from. */
export async function writeSampleProject(dir: string, samples: Sample[]): Promise<Origins> {
  writeSetting(dir);
  const origins: Origins = new Map();
  for (const sample of samples) {
    const file = fileOf(dir, sample);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (sample.openapi) await writeApiTypes(dir, path.join(path.dirname(file), sample.openapi));
    const header = (sample.uses.length ? `import { ${sample.uses.join(', ')} } from '../prelude.js';\n` : '') + (sample.within?.before ?? '');
    fs.writeFileSync(file, `${header}${sample.code}${sample.within?.after ?? ''}\n`);
    origins.set(path.relative(dir, file), { sample, offset: header.split('\n').length - 1 });
  }
  return origins;
}

/** The compiler's errors for one of the project's tsconfigs, each at its sample's file and line. */
export function compileErrors(dir: string, tsconfig: string, origins: Origins, where: (s: Sample) => string): string[] {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(dir, tsconfig), '--pretty', 'false'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const errors = run.stdout
    .split('\n')
    .filter((line) => /error TS\d+/.test(line))
    .map((line) => {
      const match = /^(.+?)\((\d+),\d+\): (.*)$/.exec(line);
      const found = match && origins.get(match[1]);
      return found && match ? `${where(found.sample)} (+${Number(match[2]) - found.offset}): ${match[3]}` : line;
    });
  if (run.status !== 0 && errors.length === 0) errors.push(`tsc -p ${tsconfig} failed (status ${run.status}): ${run.stdout}${run.stderr}`);
  return errors;
}
