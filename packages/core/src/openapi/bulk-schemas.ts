import type { SchemaModel } from '../definition/normalize';
import { MASS_UPDATE_SYNC_LIMIT } from '../http/bulk-routes';
import { itemErrors } from './error-responses';
import { ref } from './refs';

export const RESTORE_RESULT = {
  type: 'object',
  required: ['restored', 'errors'],
  properties: {
    restored: { type: 'integer' },
    errors: itemErrors('id', 'One entry per record not restored; the others are restored.'),
  },
};

/** `{link: [ids]}` of a mass update: each list names at least one record. */
const linkLists = (description: string) => ({
  type: 'object',
  description,
  additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 },
});

/** The bodies and answers of upsert, upsertAsync and entityMassUpdate. */
export function bulkSchemas(schema: SchemaModel) {
  const entityName = { type: 'string', enum: [...schema.entities.keys()] };
  return {
    UpsertItem: {
      type: 'object',
      required: ['entity', 'payload'],
      properties: {
        entity: entityName,
        payload: {
          type: 'object',
          description:
            'The fields of the record, written as in a create or an update; found by `id`, else by its `unique` fields, else by a unique index whose fields are all present. Created when nothing is found.',
        },
      },
    },
    UpsertResult: {
      type: 'object',
      required: ['status', 'stored'],
      description: '`Created`, `Updated` and `NotModified` carry `stored: true` and `entity`; `Failed` carries `stored: false` and `message`.',
      properties: {
        status: { type: 'string', enum: ['Created', 'Updated', 'NotModified', 'Failed'] },
        stored: { type: 'boolean' },
        entity: { type: 'object', description: 'The stored fields of the record (no link names), when stored.' },
        message: { type: 'string', description: 'Why the item failed.' },
      },
    },
    JobStarted: {
      type: 'object',
      required: ['jobId'],
      properties: { jobId: { type: 'string', description: 'Follow it with GET /api/Job/{id}.' } },
    },
    MassUpdate: {
      type: 'object',
      required: ['entityName'],
      description: 'Give either `ids` or `where`, and what to change: `values`, `addLinks`, `removeLinks` or several of them.',
      oneOf: [{ required: ['ids'] }, { required: ['where'] }],
      anyOf: [{ required: ['values'] }, { required: ['addLinks'] }, { required: ['removeLinks'] }],
      properties: {
        entityName: entityName,
        ids: {
          type: 'array',
          items: { type: 'string' },
          description: `Records to update. Up to ${MASS_UPDATE_SYNC_LIMIT} are updated before the answer; more run as a job.`,
        },
        where: { type: 'array', items: ref('WhereItem'), description: 'Conditions selecting the records, with the caller’s rights; always runs as a job.' },
        values: { type: 'object', description: 'The fields to set on every record, as in an update of the entity type.' },
        addLinks: linkLists('Records to link to every record, by link: `{categories: [ids]}`; a link to many keeps the ones it has, a single link is set to its one id.'),
        removeLinks: linkLists('Records to unlink from every record, by link: `{categories: [ids]}`; a single link holding one of them is cleared.'),
      },
    },
    MassUpdateResult: {
      type: 'object',
      required: ['updated', 'errors'],
      properties: {
        updated: { type: 'integer', description: 'Records updated.' },
        errors: itemErrors('id', 'One entry per record that could not be updated; the others are updated.'),
      },
    },
  };
}
