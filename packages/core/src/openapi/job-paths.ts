import { ITEM_STATUSES } from '../jobs/job-result';
import { errorResponses } from './error-responses';
import { ok, param, type OperationId, type PathItem } from './refs';

/** One page of a job's result: `{total, list}`, each item with its place in the job's input. */
export const JOB_RESULT_PAGE = {
  type: 'object',
  required: ['total', 'list'],
  properties: {
    total: { type: 'integer', description: 'Items of the result that match `status`.' },
    list: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'status'],
        properties: {
          index: { type: 'integer', description: 'The place of the item in the job\'s input (upsert items), from 0.' },
          status: { type: 'string', enum: [...ITEM_STATUSES] },
          stored: { type: 'boolean' },
          entity: { type: 'object', additionalProperties: true, description: 'The stored fields (Created, Updated, NotModified).' },
          message: { type: 'string', description: 'Why the item failed.' },
        },
        additionalProperties: true,
      },
    },
  },
};

/** `GET /Job/{id}/result`: a job's result a page at a time, filtered by status. */
export function jobResultPath(op: OperationId): PathItem {
  return {
    get: {
      operationId: op('jobResult'),
      tags: ['Job'],
      summary: 'A page of a job\'s result, optionally only the items of some statuses',
      description:
        'For a UI that polls a large job: the counts are on the Job (`created`, `updated`, `notModified`, `failed`); this pages the items, `status=Failed` for the failures. An upsert\'s items are its results; a mass update\'s are its errors. While the job runs, the result saved at its last checkpoint.',
      parameters: [
        { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        param('offset'),
        param('maxSize'),
        { name: 'status', in: 'query', description: `Comma list of ${ITEM_STATUSES.join(', ')}; default all.`, schema: { type: 'string' } },
      ],
      responses: { '200': ok('A page of the items', { $ref: '#/components/schemas/JobResultPage' }), ...errorResponses() },
    },
  };
}
