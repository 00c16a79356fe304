import type { EntityModel, SchemaModel } from '../definition/normalize';
import type { PresentKind } from '../hooks';
import type { OpenApiFragment, RequestParameter } from '../plugin';
import { MASS_UPDATE_SYNC_LIMIT } from '../http/bulk-routes';
import { attributePaths } from './attribute-paths';
import { json, ref } from './components';
import { parameterRefs } from './request-parameters';

export type Operation = Record<string, unknown>;
export type PathItem = Record<string, unknown>;
export type Generation = 'A' | 'B';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const response = (name: string) => ({ $ref: `#/components/responses/${name}` });
const ok = (description: string, schema: unknown) => ({ description, ...json(schema) });

/** Every operation answers errors in one shape; the codes are listed in docs/reference/errors.md. */
const errorResponses = {
  '400': response('BadRequest'),
  '401': response('Unauthorized'),
  '403': response('Forbidden'),
  '404': response('NotFound'),
  default: response('Error'),
};

/** What a request with a JSON body may also get: too large, and in generation A a wrong content type. */
const bodyResponses = (generation: Generation) => ({
  '413': response('PayloadTooLarge'),
  ...(generation === 'A' && { '415': response('UnsupportedMediaType') }),
});

/** What the generic record operations of core entity types do differently. */
const ENTITY_NOTES: Record<string, { create?: string; update?: string; read?: string }> = {
  Job: {
    create: 'Clients do not create jobs (403): `upsertAsync` and `entityMassUpdate` start them.',
    read: 'A user who is not an admin sees the jobs they started, unless a role sets rights on Job. `result` holds the outcome once the job is done.',
    update: 'Only `{"status": "Canceled"}` is accepted (400 for anything else), and only while the job is `Pending` (409 afterwards).',
  },
};

const LIST_PARAMS = ['select', 'offset', 'maxSize', 'sortBy', 'asc', 'order', 'where', 'totalOnly', 'collectionOnly'];

/**
 * The request parameters (headers such as `With-Meta`) of the operations of one kind, on one
 * entity type when given (`Flatten-Attributes` says so when the type has no attributes).
 */
type KindParameters = (kind: PresentKind, model?: EntityModel) => { $ref: string }[];

/** The list parameters of an entity type's lists (attributes only where it has them). */
const listParams = (model: EntityModel | undefined) => [...LIST_PARAMS, ...(model?.def.hasAttributes ? ['attributes', 'allAttributes'] : [])];

/** List, create, read, update (PATCH and PUT) and delete of one entity type. */
function entityPaths(model: EntityModel, op: (id: string) => string, generation: Generation, extra: KindParameters): Record<string, PathItem> {
  const { name } = model;
  const tags = [name];
  const notes = ENTITY_NOTES[name] ?? {};
  const note = (text?: string) => (text ? { description: text } : {});
  const body = (schema: string) => ({ required: true, ...json(ref(schema)) });
  const list: Operation = {
    operationId: op(`list${name}`),
    tags,
    summary: `List ${name} records`,
    parameters: [...listParams(model).map(param), ...extra('list', model)],
    responses: { '200': ok(`A page of ${name} records`, ref(`${name}List`)), ...errorResponses },
  };
  const create: Operation = {
    operationId: op(`create${name}`),
    tags,
    summary: `Create a ${name}`,
    ...note(notes.create),
    parameters: extra('create', model),
    requestBody: body(`${name}Create`),
    responses: { '200': ok(`The created ${name}`, ref(name)), '409': response('Conflict'), ...bodyResponses(generation), ...errorResponses },
  };
  const read: Operation = {
    operationId: op(`get${name}`),
    tags,
    summary: `Read one ${name}`,
    ...note(notes.read),
    parameters: [param('id'), param('select'), ...extra('read', model)],
    responses: { '200': ok(`The ${name}`, ref(name)), ...errorResponses },
  };
  const native = generation === 'A' ? 'patch' : 'put';
  const update = (verb: 'patch' | 'put'): Operation => ({
    operationId: op(`${verb === 'patch' ? 'update' : 'replace'}${name}`),
    tags,
    summary: `Update a ${name} (fields not sent stay unchanged)${verb === native ? '' : `; same as ${native.toUpperCase()}`}`,
    ...note(notes.update),
    parameters: [param('id'), ...extra('update', model)],
    requestBody: body(`${name}Update`),
    responses: { '200': ok(`The updated ${name}`, ref(name)), '409': response('Conflict'), ...bodyResponses(generation), ...errorResponses },
  });
  const remove: Operation = {
    operationId: op(`delete${name}`),
    tags,
    summary: `Delete a ${name} (soft unless the permanently header is sent)`,
    parameters: [param('id'), param('Permanently')],
    responses: { '200': ok('Deleted', { type: 'boolean', const: true }), ...errorResponses },
  };
  return {
    [`/${name}`]: { get: list, post: create },
    [`/${name}/{id}`]: { get: read, patch: update('patch'), put: update('put'), delete: remove },
  };
}

/** Generation B: the records one link of a record points at, one path per link. */
function linkedPaths(schema: SchemaModel, model: EntityModel, op: (id: string) => string, extra: KindParameters): Record<string, PathItem> {
  const paths: Record<string, PathItem> = {};
  for (const f of model.fields) {
    if (f.system || (f.type !== 'link' && f.type !== 'linkMultiple')) continue;
    const target = schema.entity(f.target as string);
    const suffix = f.name.charAt(0).toUpperCase() + f.name.slice(1);
    paths[`/${model.name}/{id}/${f.name}`] = {
      get: {
        operationId: op(`list${model.name}${suffix}`),
        tags: [model.name],
        summary: `The ${f.target} records that ${f.name} of a ${model.name} links to`,
        parameters: [param('id'), ...listParams(target).map(param), ...extra('linked', target)],
        responses: { '200': ok(`A page of ${f.target} records`, ref(`${f.target}List`)), ...errorResponses },
      },
    };
  }
  return paths;
}

/** Create or update many records of any types; every item gets its own result. */
function upsertPath(op: (id: string) => string, generation: Generation, name: string): PathItem {
  return {
    post: {
      operationId: op(name),
      tags: ['Records'],
      summary: 'Create or update records: each item independently, in order',
      requestBody: { required: true, ...json({ type: 'array', items: ref('UpsertItem') }) },
      responses: {
        '200': ok('One result per item, in the order of the items', { type: 'array', items: ref('UpsertResult') }),
        ...bodyResponses(generation),
        ...errorResponses,
      },
    },
  };
}

/** Upsert as a background job: the answer is the job's id, the results come with the job. */
function upsertAsyncPath(op: (id: string) => string, generation: Generation): PathItem {
  return {
    post: {
      operationId: op('upsertAsync'),
      tags: ['Records', 'Job'],
      summary: 'Create or update records in the background; follow the job with GET /Job/{id}',
      description:
        'The items are processed as by `upsert`, with the caller\'s rights, after the answer. The job\'s `result` holds one UpsertResult per item when it is done.',
      requestBody: { required: true, ...json({ type: 'array', items: ref('UpsertItem') }) },
      responses: {
        '200': ok('The job was recorded', ref('JobStarted')),
        '400': response('BadRequest'),
        '401': response('Unauthorized'),
        '403': response('Forbidden'),
        ...bodyResponses(generation),
        default: response('Error'),
      },
    },
  };
}

/** The same values on many records: at once for a few ids, as a job for many or by `where`. */
function massUpdatePath(op: (id: string) => string, generation: Generation): PathItem {
  const operation = (id: string, note: string): Operation => ({
    operationId: op(id),
    tags: ['Records'],
    summary: `Set the same values on many records${note}`,
    description:
      `Up to ${MASS_UPDATE_SYNC_LIMIT} \`ids\` are updated before the answer, which is \`{updated, errors}\`. More ids, or a \`where\`, run as a job and the answer is \`{jobId}\`. Needs the edit right on the entity type (403).`,
    requestBody: { required: true, ...json(ref('MassUpdate')) },
    responses: {
      '200': ok('The result, or the job that computes it', { oneOf: [ref('MassUpdateResult'), ref('JobStarted')] }),
      ...bodyResponses(generation),
      ...errorResponses,
    },
  });
  return { post: operation('entityMassUpdate', ''), patch: operation('entityMassUpdatePatch', '; same as POST') };
}

/** Both generations: the records a link of a record points at, named in the query. */
function relationPath(op: (id: string) => string, extra: KindParameters): PathItem {
  const required = (name: string, description: string) => ({ name, in: 'query', required: true, description, schema: { type: 'string' } });
  return {
    get: {
      operationId: op('entityRelation'),
      tags: ['Records'],
      summary: 'The records one link of a record points at',
      parameters: [
        required('entityName', 'The entity type of the record.'),
        required('id', 'The id of the record.'),
        required('link', 'The name of the link field (`categories`, `brand`).'),
        ...[...LIST_PARAMS, 'attributes', 'allAttributes'].map(param),
        ...extra('linked'),
      ],
      responses: { '200': ok('A page of linked records', ref('RecordList')), ...errorResponses },
    },
  };
}

function sessionPath(op: (id: string) => string, suffix: string): PathItem {
  const hoursHeader = (name: string) => ({ name, in: 'header', schema: { type: 'number', minimum: 0 }, description: 'Hours; 0 = no limit.' });
  return {
    get: {
      operationId: op(`signIn${suffix}`),
      tags: ['Auth'],
      summary: 'Obtain a token with Basic credentials (or read the session of a token)',
      security: [{ basicAuth: [] }, { tokenAuth: [] }],
      parameters: [
        { name: 'Authorization-Token-Only', in: 'header', schema: { type: 'string', enum: ['true'] }, description: 'Answer `{authorizationToken}` only.' },
        hoursHeader('Authorization-Token-Lifetime'),
        hoursHeader('Authorization-Token-Idletime'),
        { name: 'Authorization-Delegate', in: 'header', schema: { type: 'string' }, description: 'Admins only: the user name of the user the new token acts for.' },
      ],
      responses: {
        '200': ok('The token (and the user with its rights)', ref('Session')),
        '400': response('BadRequest'),
        '401': response('Unauthorized'),
        '403': response('Forbidden'),
        '404': response('NotFound'),
        '429': response('TooManyRequests'),
        default: response('Error'),
      },
    },
    delete: {
      operationId: op(`signOut${suffix}`),
      tags: ['Auth'],
      summary: 'Revoke the token presented',
      responses: { '200': ok('Revoked', { type: 'boolean', const: true }), '401': response('Unauthorized'), default: response('Error') },
    },
  };
}

/** Browser sessions: an HttpOnly cookie instead of a token header. */
function cookiePath(op: (id: string) => string, suffix: string, generation: Generation): PathItem {
  const credentials = { type: 'object', required: ['userName', 'password'], properties: { userName: { type: 'string' }, password: { type: 'string' } } };
  return {
    post: {
      operationId: op(`signInCookie${suffix}`),
      tags: ['Auth'],
      summary: 'Sign in and receive the session cookie (HttpOnly, SameSite=Lax)',
      security: [],
      parameters: [{ name: 'Authorization-Delegate', in: 'header', schema: { type: 'string' }, description: 'Admins only: the user name of the user the session acts for.' }],
      requestBody: { required: true, ...json(credentials) },
      responses: {
        '200': {
          ...ok('The user with its rights; the cookie is set', ref('CookieSession')),
          headers: { 'Set-Cookie': { description: 'The session cookie `er_session`.', schema: { type: 'string' } } },
        },
        '400': response('BadRequest'),
        '401': response('Unauthorized'),
        '403': response('Forbidden'),
        '404': response('NotFound'),
        '429': response('TooManyRequests'),
        ...bodyResponses(generation),
        default: response('Error'),
      },
    },
    delete: {
      operationId: op(`signOutCookie${suffix}`),
      tags: ['Auth'],
      summary: 'Revoke the session of the cookie and clear it',
      security: [],
      responses: { '200': ok('Signed out', { type: 'boolean', const: true }), default: response('Error') },
    },
  };
}

function metadataPath(op: (id: string) => string, suffix: string): PathItem {
  return {
    get: {
      operationId: op(`metadata${suffix}`),
      tags: ['Metadata'],
      summary: 'The instance metadata',
      responses: { '200': ok('Metadata', ref('Metadata')), '401': response('Unauthorized'), default: response('Error') },
    },
  };
}

function restorePath(op: (id: string) => string, generation: Generation): PathItem {
  const body = { type: 'object', required: ['entityName', 'ids'], properties: { entityName: { type: 'string' }, ids: { type: 'array', items: { type: 'string' } } } };
  return {
    post: {
      operationId: op('entityRestore'),
      tags: ['Records'],
      summary: 'Restore soft-deleted records',
      requestBody: { required: true, ...json(body) },
      responses: { '200': ok('Restored count and errors', ref('RestoreResult')), ...bodyResponses(generation), ...errorResponses },
    },
  };
}

/** A plugin operation with its id made generation-specific and responses guaranteed. */
function fragmentOperation(path: string, method: string, operation: Operation, op: (id: string) => string): Operation {
  const given = typeof operation.operationId === 'string' && operation.operationId !== '' ? operation.operationId : undefined;
  const derived = `${method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`;
  return {
    ...operation,
    operationId: op(given ?? derived),
    responses: operation.responses ?? { default: response('Error') },
  };
}

function fragmentPathItem(path: string, item: PathItem, op: (id: string) => string): PathItem {
  return Object.fromEntries(
    Object.entries(item).map(([key, value]) =>
      (HTTP_METHODS as readonly string[]).includes(key) && value && typeof value === 'object'
        ? [key, fragmentOperation(path, key, value as Operation, op)]
        : [key, value],
    ),
  );
}

/**
 * The paths of one generation, relative to its base. Plugin fragments come last and replace an
 * operation of the same path and method, as plugin routes are mounted before the record routes.
 */
export function generationPaths(
  schema: SchemaModel,
  fragments: readonly OpenApiFragment[],
  options: { generation: Generation; parameters: readonly RequestParameter[] },
): Record<string, PathItem> {
  const { generation } = options;
  const op = (id: string) => (generation === 'B' ? `v1_${id}` : id);
  const flattenNone = { $ref: '#/components/parameters/FlattenAttributesNone' };
  const extra: KindParameters = (kind, model) =>
    parameterRefs(options.parameters, kind).map((p) => (model && !model.def.hasAttributes && p.$ref.endsWith('/FlattenAttributes') ? flattenNone : p));
  const paths: Record<string, PathItem> = {
    '/userSession': sessionPath(op, ''),
    '/userSession/cookie': cookiePath(op, '', generation),
    '/metadata': metadataPath(op, ''),
  };
  if (generation === 'B') {
    Object.assign(paths, {
      '/App/user': sessionPath(op, 'AppUser'),
      '/App/user/cookie': cookiePath(op, 'AppUser', generation),
      '/Metadata': metadataPath(op, 'Metadata'),
    });
  }
  paths['/entityRestore'] = restorePath(op, generation);
  paths['/entityRelation'] = relationPath(op, extra);
  paths['/upsert'] = upsertPath(op, generation, 'upsert');
  paths['/upsertAsync'] = upsertAsyncPath(op, generation);
  paths['/entityMassUpdate'] = massUpdatePath(op, generation);
  if (generation === 'B') paths['/MassActions/action/upsert'] = upsertPath(op, generation, 'massActionUpsert');
  for (const model of schema.entities.values()) {
    Object.assign(paths, entityPaths(model, op, generation, extra));
    if (model.def.hasAttributes) Object.assign(paths, attributePaths(model, op, generation, extra('read').filter((p) => p.$ref.endsWith('/Language'))));
    if (generation === 'B') Object.assign(paths, linkedPaths(schema, model, op, extra));
  }
  for (const fragment of fragments) {
    for (const [path, item] of Object.entries(fragment.paths ?? {})) {
      if (!item || typeof item !== 'object') continue;
      const relative = path.startsWith('/') ? path : `/${path}`;
      paths[relative] = { ...paths[relative], ...fragmentPathItem(relative, item as PathItem, op) };
    }
  }
  return paths;
}
