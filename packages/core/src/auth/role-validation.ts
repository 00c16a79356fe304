import Ajv from 'ajv';
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

/** Checks the shape of a role's `scopes` and `fields` before it is stored. */
export function assertRoleShape(data: Record<string, unknown>): void {
  if (validate(data)) return;
  const issues: ValidationIssue[] = (validate.errors ?? []).map((e) => {
    const path = e.instancePath.split('/').slice(1);
    return { path, code: e.keyword === 'enum' ? 'invalid_enum_value' : 'invalid_type', message: `${path.join('.')} ${e.message}` };
  });
  throw new ApiError('CORE_VALIDATION_FAILED', `Invalid role: ${issues.map((i) => i.message).join('; ')}`, { details: { issues } });
}
