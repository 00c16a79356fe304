import type { EntityModel } from '../definition/normalize';
import { json, ref } from './components';

type Operation = Record<string, unknown>;
type Generation = 'A' | 'B';

const response = (name: string) => ({ $ref: `#/components/responses/${name}` });
const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const ok = (description: string, schema: unknown) => ({ description, ...json(schema) });

const errors = {
  '400': response('BadRequest'),
  '401': response('Unauthorized'),
  '403': response('Forbidden'),
  '404': response('NotFound'),
  default: response('Error'),
};
const bodyErrors = (generation: Generation) => ({ '413': response('PayloadTooLarge'), ...(generation === 'A' && { '415': response('UnsupportedMediaType') }) });

/** The four simple attribute endpoints of an entity type with attributes. */
export function attributePaths(
  model: EntityModel,
  op: (id: string) => string,
  generation: Generation,
  languageParameter: { $ref: string }[],
): Record<string, Record<string, Operation>> {
  const { name } = model;
  const tags = [name];
  const id = param('id');
  const body = (schema: unknown) => ({ required: true, ...json(schema) });
  return {
    [`/${name}/{id}/attributeValues`]: {
      get: {
        operationId: op(`get${name}AttributeValues`),
        tags,
        summary: `The attribute values of a ${name}`,
        description: 'Needs the read right on the record.',
        parameters: [id, ...languageParameter],
        responses: { '200': ok('Every attribute the record has', { type: 'array', items: ref('AttributeValue') }), ...errors },
      },
      delete: {
        operationId: op(`delete${name}AttributeValues`),
        tags,
        summary: `Remove attributes (and their values) from a ${name}`,
        description: 'Needs the edit right. Attributes that are unknown, or protected, are reported in `errors`; the others are removed.',
        parameters: [id],
        requestBody: body(ref('AttributeIds')),
        responses: { '200': ok('How many were removed, and why others were not', ref('AttributeDeleteResult')), ...bodyErrors(generation), ...errors },
      },
    },
    [`/${name}/{id}/addAttributes`]: {
      post: {
        operationId: op(`add${name}Attributes`),
        tags,
        summary: `Put attributes on a ${name} (without values)`,
        description: 'Needs the edit right. An unknown attribute is 400 and nothing is added.',
        parameters: [id],
        requestBody: body(ref('AttributeIds')),
        responses: { '200': ok('Added', { type: 'boolean', const: true }), ...bodyErrors(generation), ...errors },
      },
    },
    [`/${name}/{id}/upsertAttributeValues`]: {
      post: {
        operationId: op(`upsert${name}AttributeValues`),
        tags,
        summary: `Set attribute values of a ${name}, adding the attributes it lacks`,
        description: 'Needs the edit right. Values are checked by type (enum options, number bounds, linked records, units of the measure); one bad item is 400 and nothing is written.',
        parameters: [id],
        requestBody: body({ type: 'array', items: ref('AttributeValueInput') }),
        responses: { '200': ok('Stored', { type: 'boolean', const: true }), ...bodyErrors(generation), ...errors },
      },
    },
  };
}
