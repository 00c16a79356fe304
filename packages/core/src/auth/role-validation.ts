import Ajv from 'ajv';
import type { SchemaModel } from '../definition/model';
import { ApiError, type ValidationIssue } from '../errors';

const level = { enum: ['all', 'own', 'no'] };
const schema = {
  type: 'object',
  properties: {
    scopes: {
      type: ['object', 'null'],
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { create: { type: 'boolean' }, read: level, edit: level, delete: level, stream: { type: 'boolean' } },
      },
    },
    fields: {
      type: ['object', 'null'],
      additionalProperties: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          properties: { read: { type: 'boolean' }, edit: { type: 'boolean' } },
        },
      },
    },
  },
};

const validate = new Ajv({ allErrors: true }).compile(schema);

/**
 * Checks a role's `scopes` and `fields` before it is stored: their shape, and that they name entity
 * types and fields of the instance. A misspelt name would grant or hide nothing, silently (a field
 * meant to be hidden would stay readable).
 */
export function assertRoleShape(data: Record<string, unknown>, schema: SchemaModel): void {
  const issues: ValidationIssue[] = validate(data)
    ? unknownNames(data, schema)
    : (validate.errors ?? []).map((e) => {
        const path = e.instancePath.split('/').slice(1);
        return { path, code: e.keyword === 'enum' ? 'invalid_enum_value' : 'invalid_type', message: `${path.join('.')} ${e.message}` };
      });
  if (issues.length === 0) return;
  throw new ApiError('CORE_VALIDATION_FAILED', `Invalid role: ${issues.map((i) => i.message).join('; ')}`, { details: { issues } });
}

/** The entity types and fields a well-shaped role names that the instance does not have, or that no role restricts. */
function unknownNames(data: Record<string, unknown>, schema: SchemaModel): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const unknownEntity = (path: string[], name: string) =>
    issues.push({ path, code: 'unknown_entity', message: `${path.join('.')}: '${name}' is no entity type of this instance` });
  for (const name of Object.keys((data.scopes as object | null) ?? {})) if (!schema.entity(name)) unknownEntity(['scopes', name], name);
  for (const [name, fields] of Object.entries((data.fields as Record<string, object> | null) ?? {})) {
    const model = schema.entity(name);
    if (!model) {
      unknownEntity(['fields', name], name);
      continue;
    }
    for (const field of Object.keys(fields)) {
      const known = model.field.get(field);
      if (!known) issues.push({ path: ['fields', name, field], code: 'unknown_field', message: `fields.${name}.${field}: '${field}' is no field of ${name}` });
      // System fields (id, createdAt, createdBy, …) are readable by whoever reads the record and
      // written by no one: a rule on one would hide or lock nothing, silently.
      else if (known.system) issues.push({ path: ['fields', name, field], code: 'system_field', message: `fields.${name}.${field}: '${field}' is a system field of ${name}, which no role restricts` });
    }
  }
  return issues;
}
