import type { EntityModel, FieldModel } from '../definition/normalize';
import { valueSchema } from '../definition/validate-record';

/** JSON Schema (2020-12, as OpenAPI 3.1 uses it) of a value that may be null. */
function nullable(schema: Record<string, unknown>): Record<string, unknown> {
  const type = schema.type;
  if (Array.isArray(type)) return schema;
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  return schema;
}

function describe(field: FieldModel, schema: Record<string, unknown>): Record<string, unknown> {
  const out = { ...schema };
  const text = field.def.description ?? field.def.label;
  if (text) out.description = text;
  if (field.def.readOnly) out.readOnly = true;
  if (field.def.default !== undefined) out.default = field.def.default;
  return out;
}

const SYSTEM_READ: Record<string, Record<string, unknown>> = {
  id: { type: 'string', readOnly: true },
  createdAt: { type: 'string', description: 'UTC, YYYY-MM-DD HH:MM:SS', readOnly: true },
  modifiedAt: { type: 'string', description: 'UTC, YYYY-MM-DD HH:MM:SS', readOnly: true },
  createdById: { type: ['string', 'null'], readOnly: true },
  modifiedById: { type: ['string', 'null'], readOnly: true },
};

/** The record as reads return it. */
export function readSchema(model: EntityModel): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const f of model.fields) {
    if (f.def.writeOnly) continue;
    if (f.system) {
      properties[f.key] = SYSTEM_READ[f.key];
      if (f.type === 'link') properties[`${f.name}Name`] = { type: ['string', 'null'], readOnly: true };
      continue;
    }
    const schema = valueSchema(f);
    if (f.type === 'date') schema.format = 'date';
    if (f.type === 'datetime') schema.description = 'UTC, YYYY-MM-DD HH:MM:SS';
    properties[f.key] = describe(f, f.type === 'linkMultiple' ? { type: 'array', items: { type: 'string' } } : nullable(schema));
    if (f.type === 'link') properties[`${f.name}Name`] = { type: ['string', 'null'], readOnly: true };
    if (f.type === 'linkMultiple') {
      properties[`${f.name}Names`] = { type: 'object', additionalProperties: { type: ['string', 'null'] }, readOnly: true };
    }
  }
  return {
    type: 'object',
    ...(model.def.description && { description: model.def.description }),
    properties,
    required: ['id'],
  };
}

/** The body of a create (required fields required) or an update (every field optional). */
export function writeSchema(model: EntityModel, mode: 'create' | 'update'): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  if (mode === 'create') properties.id = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Optional; a UUIDv7 is made when absent.' };
  for (const f of model.fields) {
    if (f.system || f.def.readOnly) continue;
    properties[f.key] = describe(f, valueSchema(f));
    if (mode === 'create' && f.def.required && f.def.default === undefined && f.type !== 'linkMultiple') required.push(f.key);
  }
  return { type: 'object', properties, ...(required.length && { required }), additionalProperties: false };
}
