import { isLinkField, type EntityModel } from '../definition/model';
import { MAX_STREAM_SIZE } from '../events/stream';
import { bodyResponses, errorResponses, responseRef } from './error-responses';
import { json, jsonBody, ok, param, ref, type Generation, type GenerationContext, type OperationId, type PathItem } from './refs';

const ACTIONS = ['Create', 'Update', 'Delete', 'Restore', 'Relate', 'Unrelate'];
const DIFF = {
  type: 'object',
  description: '`{field: {was, became}}` of the fields the reader may read; multiple links as id sets.',
  additionalProperties: { type: 'object', properties: { was: {}, became: {} } },
};
const NULLABLE_STRING = { type: ['string', 'null'] };

/** The schemas of the change routes (CONTRACT §16). */
export const EVENT_SCHEMAS = {
  StreamItem: {
    type: 'object',
    required: ['id', 'action', 'diff', 'userId', 'userName', 'createdAt'],
    properties: {
      id: { type: 'string', description: 'The change\'s `seq`.' },
      action: { type: 'string', enum: ACTIONS },
      diff: DIFF,
      userId: NULLABLE_STRING,
      userName: NULLABLE_STRING,
      actor: { type: 'object', description: 'Delegated sessions only: who acted for the user.', properties: { id: { type: 'string' }, name: NULLABLE_STRING } },
      createdAt: { type: 'string' },
    },
  },
  StreamPage: {
    type: 'object',
    required: ['total', 'list'],
    properties: { total: { type: 'integer' }, list: { type: 'array', items: ref('StreamItem') } },
  },
  ChangeEvent: {
    type: 'object',
    description: 'The `data` of one server-sent event; the event\'s `id` is `seq` and its name is `action`.',
    required: ['seq', 'entityType', 'recordId', 'action', 'diff', 'userId', 'createdAt'],
    properties: {
      seq: { type: 'integer' },
      entityType: { type: 'string' },
      recordId: { type: 'string' },
      action: { type: 'string', enum: ACTIONS },
      diff: DIFF,
      userId: NULLABLE_STRING,
      createdAt: { type: 'string' },
    },
  },
  ListeningStarted: {
    type: 'object',
    required: ['timestamp', 'endpoint'],
    properties: {
      timestamp: { type: 'number', description: 'Unix seconds of the record\'s last change; the n-th change within one second adds n - 1 ms, so it moves after every write.' },
      endpoint: { type: 'string', description: '`listening/entity/{Entity}/{id}.json`, relative to the public URL; needs no token.' },
    },
  },
  LinkIds: {
    type: 'object',
    description: 'One record id, or several.',
    properties: { id: { type: 'string' }, ids: { type: 'array', items: { type: 'string' }, minItems: 1 } },
    oneOf: [{ required: ['id'] }, { required: ['ids'] }],
  },
};

const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({ name, in: 'query', required: false, description, schema });
const requiredQuery = (name: string, description: string) => ({ ...query(name, description), required: true });
const streamPaging = [
  query('offset', 'Changes to skip; default 0.', { type: 'integer', minimum: 0 }),
  query('maxSize', `Changes to return; default 20, at most ${MAX_STREAM_SIZE} (400 above).`, { type: 'integer', minimum: 0, maximum: MAX_STREAM_SIZE }),
];
const streamAnswer = { '200': ok('The record\'s changes, newest first', ref('StreamPage')), ...errorResponses() };
const STREAM_NOTE = 'Needs read access to the record and the role\'s `stream` right on its entity type (403). Diffs leave out the fields the caller may not read.';

/** `GET /events`, `GET /entityStream` and `POST /startEntityListening` of one generation. */
export function changePaths(op: OperationId, generation: Generation): Record<string, PathItem> {
  return {
    '/events': {
      get: {
        operationId: op('events'),
        tags: ['Records'],
        summary: 'Server-sent events: one event per change the caller may see',
        description:
          'A `text/event-stream` that stays open. Each event has `id: <seq>`, `event: <action>` and `data: <ChangeEvent>`; a comment line every 15 s keeps proxies open. Reconnecting with `Last-Event-ID` first replays every retained change after it, in order. Authenticated by token header or session cookie.',
        parameters: [
          query('entityName', 'Only these entity types (comma list).'),
          query('id', 'Only these record ids (comma list).'),
          { name: 'Last-Event-ID', in: 'header', required: false, description: 'The `id` of the last event received: the stream replays what came after it. Anything but digits is 400.', schema: { type: 'string' } },
        ],
        responses: {
          '200': { description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string', description: 'Events whose `data` is a ChangeEvent.' } } } },
          ...errorResponses(),
        },
      },
    },
    '/entityStream': {
      get: {
        operationId: op('entityStream'),
        tags: ['Records'],
        summary: 'The changes of one record, newest first',
        description: STREAM_NOTE,
        parameters: [requiredQuery('entityName', 'The entity type of the record.'), requiredQuery('id', 'The id of the record.'), ...streamPaging],
        responses: streamAnswer,
      },
    },
    '/startEntityListening': {
      post: {
        operationId: op('startEntityListening'),
        tags: ['Records'],
        summary: 'Listen to a record for eight hours: its public endpoint tells when it last changed',
        description: 'Needs read access to the record.',
        requestBody: jsonBody({ type: 'object', required: ['entityName', 'entityId'], properties: { entityName: { type: 'string' }, entityId: { type: 'string' } } }),
        responses: { '200': ok('When the record last changed, and its endpoint', ref('ListeningStarted')), ...bodyResponses(generation), ...errorResponses() },
      },
    },
  };
}

/** Both generations: `GET /{Entity}/{id}/stream`. */
export function recordStreamPath(model: EntityModel, { op }: GenerationContext): Record<string, PathItem> {
  return {
    [`/${model.name}/{id}/stream`]: {
      get: {
        operationId: op(`stream${model.name}`),
        tags: [model.name],
        summary: `The changes of one ${model.name}, newest first`,
        description: STREAM_NOTE,
        parameters: [param('id'), ...streamPaging],
        responses: streamAnswer,
      },
    },
  };
}

/** Both generations: `POST` and `DELETE /{Entity}/{id}/{link}` link and unlink records; merged into generation B's `GET`. */
export function linkWritePaths(model: EntityModel, { op, generation }: GenerationContext): Record<string, PathItem> {
  const paths: Record<string, PathItem> = {};
  // Records only the server writes have no link a client may change (403 for everyone).
  if (model.def.serverWritten) return paths;
  for (const f of model.fields) {
    if (f.system || !isLinkField(f)) continue;
    const suffix = f.name.charAt(0).toUpperCase() + f.name.slice(1);
    const answer = {
      '200': ok('Done', { type: 'boolean', const: true }),
      '409': responseRef('Conflict'),
      '412': responseRef('PreconditionFailed'),
      ...bodyResponses(generation),
      ...errorResponses(),
    };
    paths[`/${model.name}/{id}/${f.name}`] = {
      post: {
        operationId: op(`link${model.name}${suffix}`),
        tags: [model.name],
        summary: `Link ${f.target} records to ${f.name} of a ${model.name}`,
        description: `Follows the rules of an update of \`${f.name}\` (the edit right on the ${model.name}, targets that exist and the caller may read) and stores a Relate change.`,
        parameters: [param('id'), param('IfMatch'), param('IfNoneMatchWrite')],
        requestBody: jsonBody(ref('LinkIds')),
        responses: answer,
      },
      delete: {
        operationId: op(`unlink${model.name}${suffix}`),
        tags: [model.name],
        summary: `Unlink ${f.target} records from ${f.name} of a ${model.name}`,
        description: 'The ids come in the body (`{id}` or `{ids}`) or as `?id=a,b`. Stores an Unrelate change.',
        parameters: [param('id'), param('IfMatch'), param('IfNoneMatchWrite'), query('id', 'The ids to unlink (comma list), when there is no body.')],
        requestBody: { required: false, ...json(ref('LinkIds')) },
        responses: answer,
      },
    };
  }
  return paths;
}

/** The routes at the root that need no token: a record's listening endpoint and the public data. */
export function publicChangePaths(): Record<string, PathItem> {
  return {
    '/listening/entity/{entity}/{id}.json': {
      get: {
        operationId: 'listeningTimestamp',
        tags: ['Records'],
        summary: 'When a listened record last changed',
        description: 'Answers while someone called startEntityListening on the record within the last eight hours, else 404. Needs no token.',
        security: [],
        parameters: [
          { name: 'entity', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        ],
        responses: {
          '200': ok('Unix seconds of the record\'s last change', { type: 'object', required: ['timestamp'], properties: { timestamp: { type: 'number' } } }),
          '404': { $ref: '#/components/responses/NotFound' },
        },
      },
    },
    '/data/publicData.json': {
      get: {
        operationId: 'publicData',
        tags: ['Records'],
        summary: 'Data for every visitor: when anything last changed, and what plugins add',
        security: [],
        responses: {
          '200': ok('Public data', { type: 'object', required: ['dataTimestamp'], properties: { dataTimestamp: { type: 'integer', description: 'Unix seconds of the last change of anything.' } }, additionalProperties: true }),
        },
      },
    },
  };
}
