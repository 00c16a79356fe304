import { ATTRIBUTE_TYPES } from '../attributes/entities';
import { itemErrors } from './error-responses';

/** Schemas of the simple attribute endpoints. */
export const ATTRIBUTE_SCHEMAS = {
  AttributeValue: {
    type: 'object',
    required: ['attributeId', 'type', 'value', 'required', 'visible', 'readOnly', 'protected'],
    description:
      'One attribute of a record. Multilingual values also carry `value<Language>` (`valueDeDE`) unless a `language` header is sent; links carry `valueName` (or `valueNames`).',
    properties: {
      attributeId: { type: 'string' },
      attributeValueId: { type: ['string', 'null'] },
      code: { type: ['string', 'null'] },
      name: { type: 'string', description: 'The attribute name (in the `language` asked for), else its code or id.' },
      type: { type: 'string', enum: [...ATTRIBUTE_TYPES] },
      value: { description: 'Depends on `type`: string, number, boolean, date, an array (multiEnum, linkMultiple ids), a record id (link), or null.' },
      valueUnitId: { type: ['string', 'null'], description: 'Unit-bearing types (int and float with a measure).' },
      valueUnitName: { type: ['string', 'null'], description: 'Unit-bearing types.' },
      valueName: { type: ['string', 'null'], description: 'link: the name of the linked record.' },
      valueNames: { type: 'object', additionalProperties: { type: ['string', 'null'] }, description: 'linkMultiple: id → name.' },
      required: { type: 'boolean' },
      visible: { type: 'boolean' },
      readOnly: { type: 'boolean' },
      protected: { type: 'boolean' },
    },
  },
  AttributeIds: {
    type: 'object',
    required: ['attributeIds'],
    properties: { attributeIds: { type: 'array', items: { type: 'string' }, description: 'Attribute ids (generation A: ids or codes).' } },
  },
  AttributeValueInput: {
    type: 'object',
    required: ['attributeId'],
    description: 'Multilingual attributes also take `value<Language>` (`valueDeDE`).',
    properties: {
      attributeId: { type: 'string', description: 'The attribute id (generation A: id or code).' },
      value: { description: 'A value of the attribute type; null clears it.' },
      valueUnitId: { type: ['string', 'null'], description: 'A unit of the attribute’s measure; when absent, the value keeps the unit it has, and a value without one yet gets the measure’s default unit.' },
    },
  },
  AttributeDeleteResult: {
    type: 'object',
    required: ['count', 'errors'],
    properties: {
      count: { type: 'integer', description: 'Attributes removed from the record.' },
      errors: itemErrors('attributeId', 'One entry per attribute not removed: unknown (CORE_NOT_FOUND) or protected (CORE_VALIDATION_FAILED).'),
    },
  },
};
