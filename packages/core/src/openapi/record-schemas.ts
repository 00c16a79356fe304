import type { SchemaModel } from '../definition/normalize';
import { WHERE_OPERATORS } from '../sql/where';
import { readSchema, writeSchema, type ReadSchemaInput } from './entity-schemas';
import { ref } from './refs';

export const WHERE_ITEM = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: WHERE_OPERATORS },
    attribute: { type: 'string', description: 'A field name (`name`, `brandId`, `categories`), or with `isAttribute: true` an attribute id or code.' },
    value: { description: 'A value, a list of values, or for `and`, `or` and `not` a list of conditions.' },
    isAttribute: { type: 'boolean', description: '`true`: `attribute` names an attribute of the entity type (its main value is compared).' },
    timeZone: { type: 'string', description: 'IANA time zone of the date operators; default UTC.' },
  },
};

/** A page of records of whatever type a link points at. */
export const RECORD_LIST = {
  type: 'object',
  properties: { total: { type: 'integer' }, list: { type: 'array', items: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } } },
};

/** Per entity type: the record read, the create and update bodies, and a page of records. */
export function entitySchemas(schema: SchemaModel, read: ReadSchemaInput): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const model of schema.entities.values()) {
    schemas[model.name] = readSchema(model, read);
    if (!model.def.serverCreated && !model.def.serverWritten) schemas[`${model.name}Create`] = writeSchema(model, 'create');
    if (!model.def.serverWritten) schemas[`${model.name}Update`] = writeSchema(model, 'update');
    schemas[`${model.name}List`] = {
      type: 'object',
      description: '`total` is absent with `collectionOnly=true`, `list` with `totalOnly=true`.',
      properties: { total: { type: 'integer' }, list: { type: 'array', items: ref(model.name) } },
    };
  }
  return schemas;
}
