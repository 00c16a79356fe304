import { responseRef } from './error-responses';
import { ok, ref, type OperationId, type PathItem } from './refs';

export const METADATA = {
  type: 'object',
  required: ['entityDefs', 'scopes', 'fields', 'app'],
  properties: {
    entityDefs: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { fields: { type: 'object' }, links: { type: 'object' }, uniqueIndexes: { type: 'object' } },
      },
    },
    scopes: { type: 'object', additionalProperties: { type: 'object' } },
    fields: { type: 'object', description: 'The field type catalogue.' },
    app: {
      type: 'object',
      properties: { languages: { type: 'array', items: { type: 'string' } }, thumbnailTypes: { type: 'object' } },
    },
  },
};

export function metadataPath(op: OperationId, suffix: string): PathItem {
  return {
    get: {
      operationId: op(`metadata${suffix}`),
      tags: ['Metadata'],
      summary: 'The instance metadata',
      responses: {
        '200': ok('Metadata', ref('Metadata')),
        '400': { ...responseRef('BadRequest'), description: 'A `language` header naming no language of the instance (CORE_INVALID_LANGUAGE)' },
        '401': responseRef('Unauthorized'),
        default: responseRef('Error'),
      },
    },
  };
}
