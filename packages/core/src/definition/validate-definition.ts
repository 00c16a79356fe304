import Ajv from 'ajv';
import { FIELD_TYPES, type EntityDefinition } from '../declarations';
import { BootError } from '../errors';

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
] as const;

const fieldSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: [...FIELD_TYPES] },
    required: { type: 'boolean' },
    unique: { type: 'boolean' },
    default: {},
    maxLength: { type: 'integer', minimum: 1, maximum: 65535 },
    min: { type: 'number' },
    max: { type: 'number' },
    readOnly: { type: 'boolean' },
    writeOnly: { type: 'boolean' },
    options: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    entity: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$' },
    foreign: { type: 'string' },
    relationName: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' },
    extensibleEnum: { type: 'string' },
    label: { type: 'string' },
    description: { type: 'string' },
  },
} as const;

const entitySchema = {
  type: 'object',
  required: ['name', 'fields'],
  properties: {
    name: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]{0,62}$' },
    table: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$' },
    label: { type: 'string' },
    description: { type: 'string' },
    hasAttributes: { type: 'boolean' },
    fields: {
      type: 'object',
      propertyNames: { pattern: '^[a-z][A-Za-z0-9]{0,59}$' },
      additionalProperties: fieldSchema,
    },
    uniqueIndexes: {
      type: 'object',
      propertyNames: { pattern: '^[a-zA-Z][A-Za-z0-9_]{0,40}$' },
      additionalProperties: { type: 'array', minItems: 1, items: { type: 'string' } },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
const validateShape = ajv.compile(entitySchema);

function fail(entity: string, message: string): never {
  throw new BootError('CORE_DEFINITION_INVALID', `entity '${entity}': ${message}`);
}

/** Checks one definition on its own (shape, names, per-type options). */
export function validateDefinition(definition: unknown): asserts definition is EntityDefinition {
  const name =
    typeof definition === 'object' && definition !== null && 'name' in definition
      ? String((definition as { name: unknown }).name)
      : '(unnamed)';
  if (!validateShape(definition)) {
    const first = validateShape.errors?.[0];
    const where = first?.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : 'definition';
    fail(name, `${where} ${first?.message ?? 'is invalid'}`);
  }
  const def = definition as EntityDefinition;
  for (const [fieldName, field] of Object.entries(def.fields)) {
    const at = `field '${fieldName}'`;
    if ((SYSTEM_FIELD_NAMES as readonly string[]).includes(fieldName)) fail(name, `${at} is a system field name`);
    if ((field.type === 'enum' || field.type === 'multiEnum') && !field.options?.length) {
      fail(name, `${at} of type ${field.type} needs options`);
    }
    if ((field.type === 'link' || field.type === 'linkMultiple') && !field.entity) {
      fail(name, `${at} of type ${field.type} needs entity`);
    }
    if (field.type !== 'link' && field.type !== 'linkMultiple' && field.entity) {
      fail(name, `${at}: entity is only for link fields`);
    }
    if (field.unique && (field.type === 'linkMultiple' || field.type === 'multiEnum' || field.type === 'jsonObject')) {
      fail(name, `${at} of type ${field.type} cannot be unique`);
    }
    if (field.maxLength !== undefined && field.type !== 'varchar') fail(name, `${at}: maxLength is for varchar`);
  }
}

/** Checks what needs every definition: link targets, back references, index fields. */
export function validateDefinitions(definitions: readonly EntityDefinition[]): void {
  const byName = new Map<string, EntityDefinition>();
  for (const def of definitions) {
    validateDefinition(def);
    if (byName.has(def.name)) fail(def.name, 'is defined twice');
    byName.set(def.name, def);
  }
  for (const def of definitions) {
    for (const [fieldName, field] of Object.entries(def.fields)) {
      if (!field.entity) continue;
      const target = byName.get(field.entity);
      if (!target) fail(def.name, `field '${fieldName}' links to unknown entity '${field.entity}'`);
      if (field.foreign !== undefined) {
        const back = target.fields[field.foreign];
        if (!back || !back.entity || back.entity !== def.name) {
          fail(def.name, `field '${fieldName}': '${field.entity}.${field.foreign}' is not a link back to ${def.name}`);
        }
        if (field.type === 'link' && back.type !== 'linkMultiple') {
          fail(def.name, `field '${fieldName}': the foreign side of a link must be a linkMultiple`);
        }
      }
    }
    for (const [indexName, fields] of Object.entries(def.uniqueIndexes ?? {})) {
      for (const f of fields) {
        const field = def.fields[f];
        if (!field) fail(def.name, `unique index '${indexName}' names unknown field '${f}'`);
        if (field.type === 'linkMultiple' || field.type === 'multiEnum' || field.type === 'jsonObject') {
          fail(def.name, `unique index '${indexName}' cannot hold ${field.type} field '${f}'`);
        }
      }
    }
  }
}
