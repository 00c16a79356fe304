#!/usr/bin/env node
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EntityApiOptions } from './app';
import type { SchemaStep } from './sql/schema-sync';

const USAGE = `Usage: entity-records schema-diff --config <module>

Commands:
  schema-diff          Print the statements schema sync would run at start-up, without running them.

Options:
  --config <module>    Path of a JavaScript module whose default export (or export named
                       \`options\`) is the EntityApiOptions of the instance, or a function
                       returning them (or a promise of them).
  -h, --help           Show this help.

Exit status: 0 done; 1 the diff failed (invalid definitions, database unreachable);
2 bad arguments or a config module that cannot be used.`;

/** Bad arguments or an unusable config module: exit status 2. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}

interface Arguments {
  command: 'schema-diff' | 'help';
  config?: string;
}

function parseArguments(argv: readonly string[]): Arguments {
  if (argv.some((a) => a === '-h' || a === '--help')) return { command: 'help' };
  const [command, ...rest] = argv;
  if (command === undefined) throw new UsageError('No command given.');
  if (command !== 'schema-diff') throw new UsageError(`Unknown command '${command}'.`);
  let config: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '--config') {
      config = rest[++i];
      if (config === undefined || config.startsWith('-')) throw new UsageError('--config needs a module path.');
    } else if (arg.startsWith('--config=')) {
      config = arg.slice('--config='.length);
    } else {
      throw new UsageError(`Unknown argument '${arg}'.`);
    }
  }
  if (!config) throw new UsageError('schema-diff needs --config <module>.');
  return { command, config };
}

async function importModule(file: string): Promise<unknown> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config module, loaded by path at run time
    return require(file) as unknown;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_REQUIRE_ESM' && code !== 'ERR_REQUIRE_ASYNC_MODULE') throw error;
    // An ES module with top-level await; `import()` written so that TypeScript keeps it.
    const dynamicImport = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>;
    return dynamicImport(pathToFileURL(file).href);
  }
}

const isOptions = (value: unknown): value is EntityApiOptions =>
  typeof value === 'object' && value !== null && typeof (value as EntityApiOptions).database === 'string' && Array.isArray((value as EntityApiOptions).entities);

/** The options a config module gives: default export, `options`, or the module itself; a function is called. */
async function loadOptions(modulePath: string): Promise<EntityApiOptions> {
  const file = path.resolve(modulePath);
  let loaded: unknown;
  try {
    loaded = await importModule(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(file)) {
      throw new UsageError(`Config module '${modulePath}' not found (looked for ${file}).`, false);
    }
    throw new UsageError(`Config module '${modulePath}' failed to load: ${(error as Error).message ?? error}`, false);
  }
  const mod = loaded as Record<string, unknown> | undefined;
  const candidates = [mod?.default, mod?.options, mod];
  const found = candidates.find((c) => typeof c === 'function' || isOptions(c));
  const options: unknown = typeof found === 'function' ? await (found as () => unknown)() : found;
  if (!isOptions(options)) {
    throw new UsageError(
      `Config module '${modulePath}' exports no entity API options: export default (or \`options\`) an object with ` +
        '`database` (string) and `entities` (array), or a function returning one.',
      false,
    );
  }
  return options;
}

/** The database URL without its password, to say which database was compared. */
const safeUrl = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');

export function formatSteps(steps: readonly SchemaStep[], database: string): string {
  if (steps.length === 0) return 'Schema is up to date.\n';
  const lines = [`-- ${steps.length} step${steps.length === 1 ? '' : 's'} to bring ${safeUrl(database)} in step with the definitions`];
  for (const [i, step] of steps.entries()) lines.push('', `-- ${i + 1}. ${step.description}`, `${step.sql};`);
  return `${lines.join('\n')}\n`;
}

async function schemaDiff(configPath: string): Promise<void> {
  const options = await loadOptions(configPath);
  // Loaded here so that usage errors answer without loading Express and the drivers.
  const { createEntityApi } = await import('./app');
  const api = createEntityApi(options);
  try {
    process.stdout.write(formatSteps(await api.schemaDiff(), options.database));
  } finally {
    await api.close();
  }
}

/** Runs the command line; resolves to the exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const args = parseArguments(argv);
    if (args.command === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    await schemaDiff(args.config as string);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`entity-records: ${error.message}\n${error.showUsage ? `\n${USAGE}\n` : ''}`);
      return 2;
    }
    process.stderr.write(`entity-records: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((status) => {
    process.exitCode = status;
  });
}
