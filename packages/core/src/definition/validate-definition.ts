import type { ErrorObject } from 'ajv';
import { FIELD_TYPES, type EntityDefinition, type FieldDefinition } from '../declarations';
import { BootError } from '../errors';
import { RECORD_HOOKS } from '../hooks';
import { didYouMean } from '../util/nearest';
import { compileSchema, ENTITY_NAME, FIELD_NAME, INDEX_NAME, shapeValidator, type DefinitionAttributes } from './definition-schema';

export type { DefinitionAttributes } from './definition-schema';
import type { FieldModel } from './model';
import { snakeCase } from './names';
import { valueSchema } from './validate-record';

/** Names every record has; a definition may not declare them. */
export const SYSTEM_FIELD_NAMES = [
  'id',
  'deleted',
  'createdAt',
  'modifiedAt',
  'createdBy',
  'modifiedBy',
  'createdById',
  'modifiedById',
  'createdByName',
  'modifiedByName',
  'createdByActor',
  'modifiedByActor',
  'createdByActorId',
  'modifiedByActorId',
] as const;

/** Columns every entity table has. */
const SYSTEM_COLUMNS = ['id', 'deleted', 'record_version', 'created_at', 'modified_at', 'created_by_id', 'modified_by_id', 'created_by_actor_id', 'modified_by_actor_id'];

const NAME_RULES: Record<string, string> = {
  [ENTITY_NAME]: 'PascalCase: a capital letter, then letters and digits, at most 63',
  [FIELD_NAME]: 'a lower-case letter, then letters and digits, at most 60',
  [INDEX_NAME]: 'a letter, then letters, digits and _, at most 41',
};

function fail(entity: string, message: string, field?: string): never {
  const where = field === undefined ? `entity '${entity}'` : `entity '${entity}', field '${field}'`;
  throw new BootError('CORE_DEFINITION_INVALID', `${where}: ${message}`);
}

type Problem = [field: string | undefined, text: string];

/** An option no one declared: its name, and the declared one it most likely meant. */
function unknownOption(error: ErrorObject, what = 'option'): string {
  const option = (error.params as { additionalProperty: string }).additionalProperty;
  const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
  return `unknown ${what} '${option}'${didYouMean(option, known)}`;
}

/** One schema error as a sentence, with the field it is about. */
function describe(error: ErrorObject): Problem | undefined {
  if (error.keyword === 'propertyNames') return undefined; // the pattern error beside it says more
  const path = error.instancePath.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (error.keyword === 'additionalProperties') {
    if (path.length === 0) return [undefined, unknownOption(error)];
    if (path[0] === 'fields' && path.length === 2) return [path[1], unknownOption(error)];
    if (path[0] === 'hooks' && path.length === 1) return [undefined, `hooks: ${unknownOption(error, 'record hook')}`];
  }
  const rule = NAME_RULES[(error.params as { pattern?: string }).pattern ?? ''];
  const problem = rule ? `must match ${(error.params as { pattern: string }).pattern} (${rule})` : (error.message ?? 'is invalid');
  const [section, key, ...rest] = path;
  if (error.propertyName !== undefined) {
    return section === 'fields'
      ? [error.propertyName, `the field name ${problem}`]
      : [undefined, `unique index name '${error.propertyName}' ${problem}`];
  }
  if (section === 'fields' && key !== undefined) {
    if (rest[0] === 'type' && error.keyword === 'enum') {
      return [key, `type ${JSON.stringify(error.data)} is unknown (one of ${FIELD_TYPES.join(', ')})`];
    }
    return [key, `${rest.length ? rest.join('.') : 'the definition'} ${problem}`];
  }
  if (section === 'uniqueIndexes' && key !== undefined) return [undefined, `unique index '${key}': ${rest.join('.') || 'list'} ${problem}`];
  if (section === 'name') return [undefined, `the entity name ${JSON.stringify(error.data)} ${problem}`];
  return [undefined, `${path.length ? path.join('.') : 'the definition'} ${problem}`];
}

/** Up to five problems in one message; `entity 'E', field 'f': …` when they concern one field. */
function failShape(entity: string, errors: readonly ErrorObject[]): never {
  const problems = (errors.map(describe).filter(Boolean) as Problem[]).filter(
    ([f, t], i, all) => all.findIndex(([g, u]) => g === f && u === t) === i,
  );
  const fields = new Set(problems.map(([f]) => f));
  if (problems.length && fields.size === 1) fail(entity, problems.slice(0, 5).map(([, t]) => t).join('; '), problems[0][0]);
  const text = problems.slice(0, 5).map(([f, t]) => (f === undefined ? t : `field '${f}': ${t}`));
  fail(entity, text.join('; ') || 'is invalid');
}

const isLink = (f: FieldDefinition) => f.type === 'link' || f.type === 'linkMultiple';
const NOT_INDEXABLE = new Set(['linkMultiple', 'multiEnum', 'jsonObject']);

/** The record keys and the column a field takes; two fields may not share any. */
function storageNames(name: string, field: FieldDefinition): { keys: string[]; column?: string } {
  if (field.type === 'link') return { keys: [`${name}Id`, `${name}Name`], column: `${snakeCase(name)}_id` };
  if (field.type === 'linkMultiple') return { keys: [`${name}Ids`, `${name}Names`] };
  return { keys: [name], column: snakeCase(name) };
}

function checkStorageNames(def: EntityDefinition): void {
  const keys = new Map<string, string>(SYSTEM_FIELD_NAMES.map((k) => [k, 'a system field']));
  const columns = new Map<string, string>(SYSTEM_COLUMNS.map((c) => [c, 'a system field']));
  for (const [fieldName, field] of Object.entries(def.fields)) {
    const { keys: own, column } = storageNames(fieldName, field);
    for (const key of own) {
      const other = keys.get(key);
      if (other) fail(def.name, `its record key '${key}' is already taken by ${other}`, fieldName);
      keys.set(key, `field '${fieldName}'`);
    }
    if (column === undefined) continue;
    const other = columns.get(column);
    if (other) fail(def.name, `its column '${column}' is already taken by ${other}`, fieldName);
    columns.set(column, `field '${fieldName}'`);
  }
}

function checkField(entity: string, fieldName: string, field: FieldDefinition): void {
  const bad = (message: string): never => fail(entity, message, fieldName);
  if ((SYSTEM_FIELD_NAMES as readonly string[]).includes(fieldName)) bad('is a system field name');
  // A multiEnum without `options` is a list of free strings; an empty list of options allows nothing.
  const optionsMissing = field.type === 'enum' ? !field.options?.length : field.type === 'multiEnum' && field.options?.length === 0;
  if (optionsMissing) bad(`type ${field.type} needs options`);
  if (isLink(field) && !field.entity) bad(`type ${field.type} needs entity`);
  if (!isLink(field) && field.entity) bad('entity is only for link fields');
  if (!isLink(field) && field.foreign !== undefined) bad('foreign is only for link fields');
  if (field.relationName !== undefined && field.type !== 'linkMultiple') bad('relationName is only for linkMultiple fields');
  if (field.unique && NOT_INDEXABLE.has(field.type)) bad(`type ${field.type} cannot be unique`);
  if (field.maxLength !== undefined && field.type !== 'varchar') bad('maxLength is for varchar');
  if (field.searchable && field.type !== 'varchar' && field.type !== 'text') bad('searchable is for varchar and text');
  if (field.min !== undefined && field.max !== undefined && field.min > field.max) bad(`min ${field.min} is above max ${field.max}`);
  if (field.computed) {
    if (isLink(field)) bad('a link cannot be computed');
    for (const key of ['required', 'unique', 'default', 'writeOnly', 'searchable'] as const) if (field[key] !== undefined) bad(`a computed field has no ${key}`);
  }
  if (field.default !== undefined && field.default !== null) {
    const schema = valueSchema({ type: field.type, def: field } as FieldModel);
    const check = compileSchema(schema);
    if (!check(field.default)) bad(`default ${JSON.stringify(field.default)} ${check.errors?.[0]?.message ?? 'is invalid'}`);
  }
}

/**
 * Checks one definition on its own (shape, names, per-type options), with the options plugins
 * declared (`attributes`).
 */
export function validateDefinition(definition: unknown, attributes?: DefinitionAttributes): asserts definition is EntityDefinition {
  const name =
    typeof definition === 'object' && definition !== null && 'name' in definition
      ? String((definition as { name: unknown }).name)
      : '(unnamed)';
  const validate = shapeValidator(attributes);
  if (!validate(definition)) {
    failShape(name, validate.errors ?? []);
  }
  const def = definition as EntityDefinition;
  for (const [fieldName, field] of Object.entries(def.fields)) checkField(name, fieldName, field);
  checkRightsFrom(def);
  checkStorageNames(def);
  checkFunctions(def);
}

/** `rightsFrom` names another field of the entity, one that follows no other field's rights itself. */
function checkRightsFrom(def: EntityDefinition): void {
  for (const [fieldName, field] of Object.entries(def.fields)) {
    const followed = field.rightsFrom;
    if (followed === undefined) continue;
    if (followed === fieldName || !Object.hasOwn(def.fields, followed)) fail(def.name, `rightsFrom '${followed}' must name another field of ${def.name}`, fieldName);
    if (def.fields[followed].rightsFrom !== undefined) fail(def.name, `rightsFrom '${followed}' names a field that follows the rights of another field itself`, fieldName);
  }
}

/** `access` and each of `hooks` are functions (JSON Schema cannot tell). */
function checkFunctions(def: EntityDefinition): void {
  if (def.access !== undefined && typeof def.access !== 'function') fail(def.name, 'access must be a function of the request context (see docs/guide/permissions.md#row-rules)');
  for (const name of RECORD_HOOKS) {
    const hook = def.hooks?.[name];
    if (hook !== undefined && typeof hook !== 'function') fail(def.name, `hooks.${name} must be a function`);
  }
}

/** A link's `foreign` must name a field of the target that links back, and both sides must agree. */
function checkForeign(link: { def: EntityDefinition; fieldName: string; field: FieldDefinition; target: EntityDefinition }): void {
  const { def, fieldName, field, target } = link;
  const bad = (message: string): never => fail(def.name, message, fieldName);
  const foreign = field.foreign as string;
  const back = target.fields[foreign];
  if (!back || !back.entity || back.entity !== def.name) bad(`'${target.name}.${foreign}' is not a link back to ${def.name}`);
  if (field.type === 'link' && back.type !== 'linkMultiple') bad('the foreign side of a link must be a linkMultiple');
  if (target.name === def.name && foreign === fieldName) bad('a link to its own entity cannot name itself as foreign');
  if (field.type === 'linkMultiple' && back.type === 'linkMultiple') {
    // Both sides of a many-to-many describe one join table; they must name each other.
    if (back.foreign !== fieldName) bad(`'${target.name}.${foreign}' must name '${fieldName}' as its foreign`);
    if (back.relationName !== field.relationName) {
      bad(`relationName '${field.relationName ?? ''}' differs from '${target.name}.${foreign}' ('${back.relationName ?? ''}')`);
    }
  }
}

function checkUniqueIndexes(def: EntityDefinition): void {
  const table = def.table ?? snakeCase(def.name);
  const fieldIndexes = new Map(
    Object.entries(def.fields)
      .filter(([, f]) => f.unique)
      .map(([n, f]) => [storageNames(n, f).column as string, n]),
  );
  for (const [indexName, fields] of Object.entries(def.uniqueIndexes ?? {})) {
    const at = `unique index '${indexName}'`;
    for (const f of fields) {
      const field = def.fields[f];
      if (!field) fail(def.name, `${at} names an unknown field`, f);
      if (NOT_INDEXABLE.has(field.type)) fail(def.name, `${at} cannot hold a ${field.type} field`, f);
    }
    // Both become `uq_<table>_<name>`; only an index over that very field may share the name.
    const sameName = fieldIndexes.get(indexName);
    if (sameName && !(fields.length === 1 && fields[0] === sameName)) {
      fail(def.name, `${at} has the name of the index of unique field '${sameName}' (uq_${table}_${indexName})`, sameName);
    }
  }
}

export interface ValidateDefinitionsOptions {
  /** Definitions already checked elsewhere: link targets and taken names, not checked again. */
  known?: readonly EntityDefinition[];
  /** Options plugins add to definitions, checked like core's. */
  attributes?: DefinitionAttributes;
}

/** Checks what needs every definition: link targets, back references, index fields, table names. */
export function validateDefinitions(definitions: readonly EntityDefinition[], options: ValidateDefinitionsOptions = {}): void {
  const known = options.known ?? [];
  const byName = new Map<string, EntityDefinition>(known.map((d) => [d.name, d]));
  const tables = new Map<string, string>(known.map((d) => [d.table ?? snakeCase(d.name), d.name]));
  for (const def of definitions) {
    validateDefinition(def, options.attributes);
    if (byName.has(def.name)) fail(def.name, 'is defined twice');
    byName.set(def.name, def);
    const table = def.table ?? snakeCase(def.name);
    const other = tables.get(table);
    if (other) fail(def.name, `its table '${table}' is already the table of entity '${other}'`);
    tables.set(table, def.name);
  }
  for (const def of definitions) {
    for (const [fieldName, field] of Object.entries(def.fields)) {
      if (!field.entity) continue;
      const target = byName.get(field.entity);
      if (!target) fail(def.name, `links to unknown entity '${field.entity}'`, fieldName);
      if (field.foreign !== undefined) checkForeign({ def, fieldName, field, target });
    }
    checkUniqueIndexes(def);
  }
}
