import type { EntityModel } from '../definition/normalize';
import { bodyResponses, errorResponses, responseRef } from './error-responses';
import { json, jsonBody, ok, param, ref, type GenerationContext, type Operation } from './refs';

/** The four simple attribute endpoints of an entity type with attributes. */
export function attributePaths(model: EntityModel, { op, generation, extra }: GenerationContext): Record<string, Record<string, Operation>> {
  const { name } = model;
  const tags = [name];
  const id = param('id');
  const language = extra('read').filter((p) => p.$ref.endsWith('/Language'));
  // The writes take If-Match as an update does: another version is 412 and writes nothing.
  const written = (description: string, schema: unknown) => ({ '200': ok(description, schema), '412': responseRef('PreconditionFailed'), ...bodyResponses(generation), ...errorResponses() });
  return {
    [`/${name}/{id}/attributeValues`]: {
      get: {
        operationId: op(`get${name}AttributeValues`),
        tags,
        summary: `The attribute values of a ${name}`,
        description: 'Needs the read right on the record.',
        parameters: [id, ...language],
        responses: { '200': ok('Every attribute the record has', { type: 'array', items: ref('AttributeValue') }), ...errorResponses() },
      },
      delete: {
        operationId: op(`delete${name}AttributeValues`),
        tags,
        summary: `Remove attributes (and their values) from a ${name}`,
        description:
          'Needs the edit right. Attributes that are unknown, or protected, are reported in `errors`; the others are removed. The attributes go in the body, or, for clients that send no body with DELETE, in the query (`attributeIds`).',
        parameters: [
          id,
          {
            name: 'attributeIds',
            in: 'query',
            required: false,
            description: 'The attributes to remove, as a comma list (instead of the body).',
            schema: { type: 'string' },
            example: 'weight,color',
          },
          param('IfMatch'),
          param('IfNoneMatchWrite'),
        ],
        requestBody: { required: false, ...json(ref('AttributeIds')) },
        responses: written('How many were removed, and why others were not', ref('AttributeDeleteResult')),
      },
    },
    [`/${name}/{id}/addAttributes`]: {
      post: {
        operationId: op(`add${name}Attributes`),
        tags,
        summary: `Put attributes on a ${name} (without values)`,
        description: 'Needs the edit right. An unknown attribute is 400 and nothing is added.',
        parameters: [id, param('IfMatch'), param('IfNoneMatchWrite')],
        requestBody: jsonBody(ref('AttributeIds')),
        responses: written('Added', { type: 'boolean', const: true }),
      },
    },
    [`/${name}/{id}/upsertAttributeValues`]: {
      post: {
        operationId: op(`upsert${name}AttributeValues`),
        tags,
        summary: `Set attribute values of a ${name}, adding the attributes it lacks`,
        description: 'Needs the edit right. Values are checked by type (enum options, number bounds, linked records, units of the measure); one bad item is 400 and nothing is written.',
        parameters: [id, param('IfMatch'), param('IfNoneMatchWrite')],
        requestBody: jsonBody({ type: 'array', items: ref('AttributeValueInput') }),
        responses: written('Stored', { type: 'boolean', const: true }),
      },
    },
  };
}
