import { MASS_UPDATE_SYNC_LIMIT } from '../http/bulk-routes';
import { bodyResponses, errorResponses, responseRef } from './error-responses';
import { idempotentOperation } from './idempotency';
import { jsonBody, ok, ref, type Generation, type Operation, type OperationId, type PathItem } from './refs';

/** Header parameters of the bulk writes (`Flatten-Attributes` where an entity type has attributes). */
export type BulkHeaders = readonly { $ref: string }[];

const upsertItems = () => jsonBody({ type: 'array', items: ref('UpsertItem') });

/** Create or update many records of any types; every item gets its own result. */
export function upsertPath(op: OperationId, generation: Generation, { name, headers = [] }: { name: string; headers?: BulkHeaders }): PathItem {
  return {
    post: idempotentOperation({
      operationId: op(name),
      tags: ['Records'],
      summary: 'Create or update records: each item independently, in order',
      parameters: [...headers],
      requestBody: upsertItems(),
      responses: {
        '200': ok('One result per item, in the order of the items', { type: 'array', items: ref('UpsertResult') }),
        ...bodyResponses(generation),
        ...errorResponses(),
      },
    }),
  };
}

/** Upsert as a background job: the answer is the job's id, the results come with the job. */
export function upsertAsyncPath(op: OperationId, generation: Generation, headers: BulkHeaders = []): PathItem {
  return {
    post: idempotentOperation({
      operationId: op('upsertAsync'),
      tags: ['Records', 'Job'],
      summary: 'Create or update records in the background; follow the job with GET /Job/{id}',
      description:
        'The items are processed as by `upsert`, with the caller\'s rights, after the answer. The job\'s `result` holds one UpsertResult per item when it is done.',
      parameters: [...headers],
      requestBody: upsertItems(),
      responses: {
        '200': ok('The job was recorded', ref('JobStarted')),
        '400': responseRef('BadRequest'),
        '401': responseRef('Unauthorized'),
        '403': responseRef('Forbidden'),
        ...bodyResponses(generation),
        default: responseRef('Error'),
      },
    }),
  };
}

/** The same values on many records: at once for a few ids, as a job for many or by `where`. */
export function massUpdatePath(op: OperationId, generation: Generation, headers: BulkHeaders = []): PathItem {
  const operation = (id: string, note: string): Operation => idempotentOperation({
    operationId: op(id),
    tags: ['Records'],
    summary: `Set the same values on many records${note}`,
    description:
      `Up to ${MASS_UPDATE_SYNC_LIMIT} \`ids\` are updated before the answer, which is \`{updated, errors}\`. More ids, or a \`where\`, run as a job and the answer is \`{jobId}\`. Needs the edit right on the entity type (403).`,
    parameters: [...headers],
    requestBody: jsonBody(ref('MassUpdate')),
    responses: {
      '200': ok('The result, or the job that computes it', { oneOf: [ref('MassUpdateResult'), ref('JobStarted')] }),
      ...bodyResponses(generation),
      ...errorResponses(),
    },
  });
  return { post: operation('entityMassUpdate', ''), patch: operation('entityMassUpdatePatch', '; same as POST') };
}

export function restorePath(op: OperationId, generation: Generation): PathItem {
  const body = { type: 'object', required: ['entityName', 'ids'], properties: { entityName: { type: 'string' }, ids: { type: 'array', items: { type: 'string' } } } };
  return {
    post: {
      operationId: op('entityRestore'),
      tags: ['Records'],
      summary: 'Restore soft-deleted records',
      requestBody: jsonBody(body),
      responses: { '200': ok('Restored count and errors', ref('RestoreResult')), ...bodyResponses(generation), ...errorResponses() },
    },
  };
}
