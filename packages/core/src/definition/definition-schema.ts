import Ajv from 'ajv';
import { FIELD_TYPES } from '../declarations';
import { BootError } from '../errors';
import { RECORD_HOOKS } from '../hooks';
import { isValidDate, normalizeDateTime } from '../time';
import { compileOnce } from '../util/compile-once';

/** The JSON Schema of an entity definition, with the options plugins add (`DefinitionAttributes`). */

export const ENTITY_NAME = '^[A-Z][A-Za-z0-9]{0,62}$';
export const FIELD_NAME = '^[a-z][A-Za-z0-9]{0,59}$';
export const INDEX_NAME = '^[a-zA-Z][A-Za-z0-9_]{0,40}$';

const fieldSchema = {
  type: 'object',
  required: ['type'],
  additionalProperties: false,
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
    computed: { type: 'boolean' },
    options: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    entity: { type: 'string', pattern: ENTITY_NAME },
    foreign: { type: 'string' },
    relationName: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' },
    extensibleEnum: { type: 'string' },
    isMultilang: { type: 'boolean' },
    searchable: { type: 'boolean' },
    rightsFrom: { type: 'string', pattern: FIELD_NAME },
    label: { type: 'string' },
    description: { type: 'string' },
  },
} as const;

const entitySchema = {
  type: 'object',
  required: ['name', 'fields'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: ENTITY_NAME },
    table: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$' },
    label: { type: 'string' },
    description: { type: 'string' },
    hasAttributes: { type: 'boolean' },
    serverCreated: { type: 'boolean' },
    serverWritten: { type: 'boolean' },
    serverIds: { type: 'boolean' },
    // Functions: JSON Schema cannot tell them; `validateDefinition` checks that they are.
    access: {},
    hooks: { type: 'object', additionalProperties: false, properties: Object.fromEntries(RECORD_HOOKS.map((name) => [name, {}])) },
    fields: {
      type: 'object',
      propertyNames: { pattern: FIELD_NAME },
      additionalProperties: fieldSchema,
    },
    uniqueIndexes: {
      type: 'object',
      propertyNames: { pattern: INDEX_NAME },
      additionalProperties: { type: 'array', minItems: 1, items: { type: 'string' } },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
ajv.addFormat('date', { type: 'string', validate: isValidDate });
ajv.addFormat('date-time', { type: 'string', validate: (v: string) => normalizeDateTime(v) !== undefined });
const validateShape = ajv.compile(entitySchema);

/** A JSON Schema compiled with the formats of definitions (`date`, `date-time`). */
export const compileSchema = compileOnce(ajv);

/**
 * Options plugins add to field and entity definitions, each with the JSON Schema of its value.
 * An option neither core nor a plugin declared is a start-up error that names the nearest known one.
 */
export interface DefinitionAttributes {
  field?: Record<string, Record<string, unknown>>;
  entity?: Record<string, Record<string, unknown>>;
}

const shapeValidators = new WeakMap<DefinitionAttributes, ReturnType<typeof ajv.compile>>();

/** The shape check with the plugins' options added; a plugin may not redefine a core option. */
export function shapeValidator(attributes: DefinitionAttributes | undefined) {
  if (!attributes) return validateShape;
  let validate = shapeValidators.get(attributes);
  if (validate) return validate;
  const taken = (own: Record<string, unknown>, added: Record<string, unknown> | undefined, what: string) => {
    const clash = Object.keys(added ?? {}).find((k) => k in own);
    if (clash) throw new BootError('CORE_PLUGIN_INVALID', `the ${what} option '${clash}' is core's; a plugin cannot declare it again`);
  };
  taken(fieldSchema.properties, attributes.field, 'field');
  taken(entitySchema.properties, attributes.entity, 'entity');
  const field = { ...fieldSchema, properties: { ...fieldSchema.properties, ...attributes.field } };
  const entity = {
    ...entitySchema,
    properties: { ...entitySchema.properties, ...attributes.entity, fields: { ...entitySchema.properties.fields, additionalProperties: field } },
  };
  validate = compileSchema(entity);
  shapeValidators.set(attributes, validate);
  return validate;
}
