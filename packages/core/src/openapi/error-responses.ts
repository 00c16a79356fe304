import { json, ref, type Generation } from './refs';

/** The body of every error answer, its code one of `codes` (core's and the plugins'). */
export const errorBody = (codes: readonly string[]) => ({
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      properties: {
        code: { type: 'string', enum: [...codes], description: 'See docs/reference/errors.md: codes are prefixed by package.' },
        message: { type: 'string' },
        details: { type: 'object', description: 'Always present, empty when there is nothing to point at. Validation failures carry `issues: [{path, code, message}]` (at most 100; `issuesOmitted` counts the others).' },
      },
    },
  },
});

/**
 * A `$ref` to one of core's responses (`BadRequest`, `Conflict`, `PayloadTooLarge`, …), for
 * operations of core and of plugin fragments.
 */
export const responseRef = (name: keyof ReturnType<typeof responseComponents>) => ({ $ref: `#/components/responses/${name}` });

/**
 * The error statuses (400, 401, 403, 404 and the default) every record operation documents; the
 * codes are listed in docs/reference/errors.md.
 */
export const errorResponses = () => ({
  '400': responseRef('BadRequest'),
  '401': responseRef('Unauthorized'),
  '403': responseRef('Forbidden'),
  '404': responseRef('NotFound'),
  default: responseRef('Error'),
});

/**
 * What a request with a JSON body may also get: too large, and a body the server cannot read as
 * JSON text (415): in either generation a charset other than UTF-8 or a `Content-Encoding` the
 * parser does not know, in generation A (`jsonOnly`) also a content type that is not JSON.
 */
export const bodyResponses = (generation: Generation) => ({
  '413': responseRef('PayloadTooLarge'),
  '415': { ...responseRef('UnsupportedMediaType'), description: unsupportedBody(generation) },
});

/** When a generation answers 415 to a body. */
const unsupportedBody = (generation: Generation) =>
  generation.jsonOnly
    ? 'A body whose Content-Type is not application/json (or application/*+json), or in a charset other than UTF-8 or a Content-Encoding the server cannot read'
    : 'A body in a charset other than UTF-8 or a Content-Encoding the server cannot read (any Content-Type is read as JSON)';

/** The per-item failures of an operation on many items, each named by `key`. */
export const itemErrors = (key: string, description: string) => ({
  type: 'array',
  description,
  items: {
    type: 'object',
    required: [key, 'code', 'message'],
    properties: { [key]: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
  },
});

/** The strong `ETag` of a record's version (single reads, create and update answers). */
export const ETAG_HEADER = { description: 'The record\'s version; send it back in If-Match or If-None-Match.', schema: { type: 'string' } };

/** Error responses carry the message again in `X-Status-Reason`, which AtroCore clients read. */
const errorResponse = (description: string) => ({
  description,
  headers: { 'X-Status-Reason': { description: 'The error message.', schema: { type: 'string' } } },
  ...json(ref('Error')),
});

/** The responses of the components: every error status an operation may refer to. */
export function responseComponents() {
  const throttled = errorResponse('Too many failed sign-ins for this user name or address');
  const unavailable = errorResponse(
    'Any other error: 500 with a request id; 503 when the database is unavailable, a statement ran past its time-out, too many sign-ins or large bodies wait, or the server is shutting down',
  );
  return {
    BadRequest: errorResponse('Malformed JSON, a wrong type, an unknown field or a bad query parameter'),
    Unauthorized: errorResponse('Missing, unknown, expired or revoked token'),
    Forbidden: errorResponse('The role does not allow this action, or a field named in select, sortBy or where is not readable'),
    NotFound: errorResponse('Unknown entity type or record, or a record the caller may not see'),
    Conflict: errorResponse('A unique field or index already holds the value, a link object matches several records, a job is no longer pending, or a request with the same Idempotency-Key is still running'),
    IdempotencyMismatch: errorResponse('The Idempotency-Key was used for another request (method, path or body) within the last 24 hours'),
    PayloadTooLarge: errorResponse('The body is larger than the instance allows'),
    PreconditionFailed: errorResponse('If-Match named another version of the record, or If-None-Match its current one: nothing was written'),
    NotModified: { description: 'The record is still at the version If-None-Match names', headers: { ETag: ETAG_HEADER } },
    UnsupportedMediaType: errorResponse('A body the server cannot read as JSON: generation A, a Content-Type that is not JSON; either generation, a charset other than UTF-8 or an unknown Content-Encoding'),
    TooManyRequests: {
      ...throttled,
      headers: { ...throttled.headers, 'Retry-After': { description: 'Seconds until a sign-in is accepted again.', schema: { type: 'integer' } } },
    },
    Error: {
      ...unavailable,
      headers: { ...unavailable.headers, 'Retry-After': { description: 'With 503: seconds to wait before trying again.', schema: { type: 'integer' } } },
    },
  };
}
