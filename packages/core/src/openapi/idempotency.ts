import { responseRef } from './error-responses';
import { param, type Operation } from './refs';

/**
 * The OpenAPI side of `Idempotency-Key` (CONTRACT §16): the request header, the
 * `Idempotent-Replayed` answer header and the 409 and 422 answers, added to an operation that
 * honours the key (core's creates, upserts and mass updates; plugins' uploads).
 */

/** The `components.parameters` entry of the header. */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A key the client makes per request (a UUID, say): the first answer is kept for 24 hours per user and key, and a repeat of the same request (method, path and body) gets it again with `Idempotent-Replayed: true`, writing nothing. The same key with another request is 422; a repeat while the first still runs is 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

const REPLAYED_HEADER = {
  'Idempotent-Replayed': { description: '`true` when this is the kept answer of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
};

/** `operation` with the header, the marker on its 2xx answers, and the 409 and 422 answers. */
export function idempotentOperation(operation: Operation): Operation {
  const responses = { ...((operation.responses ?? {}) as Record<string, Record<string, unknown>>) };
  for (const [status, response] of Object.entries(responses)) {
    if (!/^2/.test(status) || '$ref' in response) continue;
    responses[status] = { ...response, headers: { ...(response.headers as Record<string, unknown> | undefined), ...REPLAYED_HEADER } };
  }
  return {
    ...operation,
    parameters: [...((operation.parameters as unknown[] | undefined) ?? []), param('IdempotencyKey')],
    responses: { ...responses, '409': responseRef('Conflict'), '422': responseRef('IdempotencyMismatch') },
  };
}
