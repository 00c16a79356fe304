import { CORE_ENTITIES } from '../core-entities';
import type { EntityDefinition } from '../declarations';
import { BootError } from '../errors';
import { validateDefinitions, type DefinitionAttributes } from './validate-definition';

export interface LoadDefinitionsOptions {
  /**
   * Definitions the loaded ones may link to and must not redefine (TypeScript or plugin
   * entities); they are not checked again and not returned. Default: core's built-in
   * entities (`CORE_ENTITIES`: User, Role, Job, ExtensibleEnum, ExtensibleEnumOption).
   */
  known?: readonly EntityDefinition[];
  /** Where the definitions come from (a file name), put in front of error messages. */
  source?: string;
  /**
   * The options plugins add to definitions (`isMultilang`), as they declare them with
   * `addDefinitionAttributes`; any other unknown option is an error.
   */
  attributes?: DefinitionAttributes;
}

const invalid = (source: string | undefined, message: string): BootError =>
  new BootError('CORE_DEFINITION_INVALID', source ? `${source}: ${message}` : message);

function parse(text: string, source: string | undefined): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalid(source, `not valid JSON (${(error as Error).message})`);
  }
}

/** An array of definitions, `{ "entities": [...] }`, or one definition. */
function asList(input: unknown, source: string | undefined): unknown[] {
  if (Array.isArray(input)) return input;
  if (typeof input === 'object' && input !== null) {
    if ('entities' in input && !('fields' in input)) {
      const { entities } = input as { entities: unknown };
      if (Array.isArray(entities)) return entities;
      throw invalid(source, '"entities" must be an array of entity definitions');
    }
    return [input];
  }
  throw invalid(source, 'expected an entity definition, an array of them, or { "entities": [...] }');
}

/**
 * Entity definitions from JSON: already parsed values or JSON text. Every definition is checked
 * as `createEntityApi` would check it, together with `options.known`; the first problem throws a
 * `BootError` (`CORE_DEFINITION_INVALID`) whose message names the entity and the field.
 *
 * @example
 * const entities = loadDefinitions([{ name: 'Brand', fields: { name: { type: 'varchar', unique: true } } }])
 * createEntityApi({ database: 'sqlite:data/app.db', entities })
 * @see docs/reference/entities.md
 */
export function loadDefinitions(input: unknown, options: LoadDefinitionsOptions = {}): EntityDefinition[] {
  const { known = CORE_ENTITIES, source, attributes } = options;
  const list = asList(typeof input === 'string' ? parse(input, source) : input, source);
  list.forEach((item, index) => {
    const name = typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
    if (typeof name !== 'string') throw invalid(source, `definition #${index + 1} has no "name" string`);
  });
  const definitions = list as EntityDefinition[];
  try {
    validateDefinitions(definitions, { known, attributes });
  } catch (error) {
    if (source && error instanceof BootError) throw invalid(source, error.message.slice(`${error.code}: `.length));
    throw error;
  }
  return definitions;
}
