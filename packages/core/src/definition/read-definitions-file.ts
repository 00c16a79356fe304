import fs from 'node:fs';
import type { EntityDefinition } from '../declarations';
import { BootError } from '../errors';
import { loadDefinitions, type LoadDefinitionsOptions } from './load-definitions';

/**
 * Reads entity definitions from a `.json` file (an array, `{ "entities": [...] }` or one
 * definition) and checks them with {@link loadDefinitions}; messages start with the file name.
 *
 * @example
 * const entities = readDefinitionsFile(path.join(__dirname, '../entities.json'))
 * @see docs/reference/entities.md
 */
export function readDefinitionsFile(file: string, options: Omit<LoadDefinitionsOptions, 'source'> = {}): EntityDefinition[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new BootError('CORE_CONFIG_INVALID', `cannot read definitions file '${file}' (${reason})`);
  }
  return loadDefinitions(text, { ...options, source: file });
}
