import type { SchemaModel } from '../definition/normalize';
import { ERROR_STATUS } from '../errors';
import type { OpenApiFragment } from '../plugin';
import { readSchema, writeSchema } from './entity-schemas';

export interface OpenApiInput {
  schema: SchemaModel;
  fragments: readonly OpenApiFragment[];
  info?: { title?: string; version?: string; description?: string };
  publicUrl?: string;
}

type Operation = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (description: string, schema: unknown) => ({ description, ...json(schema) });

/** Every operation answers errors in one shape; the codes are listed in docs/reference/errors.md. */
const errorResponses = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '404': { $ref: '#/components/responses/NotFound' },
  default: { $ref: '#/components/responses/Error' },
};

const LIST_PARAMS = ['select', 'offset', 'maxSize', 'sortBy', 'asc', 'where', 'totalOnly', 'collectionOnly'];
const READ_HEADERS = ['WithMeta', 'Language', 'FlattenAttributes'];

function components(schema: SchemaModel, fragments: readonly OpenApiFragment[]) {
  const schemas: Record<string, unknown> = {
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'string', enum: Object.keys(ERROR_STATUS) }, message: { type: 'string' }, details: { type: 'object' } },
        },
      },
    },
    Session: {
      type: 'object',
      required: ['authorizationToken'],
      properties: {
        authorizationToken: { type: 'string' },
        user: { type: 'object', properties: { id: { type: 'string' }, userName: { type: 'string' }, name: { type: ['string', 'null'] }, isAdmin: { type: 'boolean' }, rolesIds: { type: 'array', items: { type: 'string' } } } },
        acl: { type: 'object' },
      },
    },
    RestoreResult: {
      type: 'object',
      properties: { restored: { type: 'integer' }, errors: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } } } } },
    },
  };
  for (const model of schema.entities.values()) {
    schemas[model.name] = readSchema(model);
    schemas[`${model.name}Create`] = writeSchema(model, 'create');
    schemas[`${model.name}Update`] = writeSchema(model, 'update');
    schemas[`${model.name}List`] = {
      type: 'object',
      properties: { total: { type: 'integer' }, list: { type: 'array', items: ref(model.name) } },
    };
  }
  for (const f of fragments) Object.assign(schemas, f.components?.schemas ?? {});
  const header = (name: string, description: string, values?: string[]) => ({
    name,
    in: 'header',
    required: false,
    description,
    schema: values ? { type: 'string', enum: values } : { type: 'string' },
  });
  const query = (name: string, description: string, s: Record<string, unknown>) => ({ name, in: 'query', required: false, description, schema: s });
  const errorResponse = (description: string) => ({ description, ...json(ref('Error')) });
  return {
    securitySchemes: {
      tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization-Token', description: 'A token from GET /api/userSession.' },
      basicAuth: { type: 'http', scheme: 'basic', description: 'Only for obtaining a token.' },
    },
    parameters: {
      WithMeta: header('With-Meta', 'Adds `_meta` (permissions and more) to every record in the response.', ['true', '1']),
      Language: header('language', 'A language code of the instance: multilingual fields carry that language.'),
      FlattenAttributes: header('Flatten-Attributes', 'Attribute values become fields of the record and `attributesDefs` is added.', ['true']),
      Permanently: header('permanently', 'Remove the row instead of soft-deleting it.', ['true']),
      select: query('select', 'Comma-separated field names to return (`id` is always returned).', { type: 'string' }),
      offset: query('offset', 'Records to skip; default 0.', { type: 'integer', minimum: 0 }),
      maxSize: query('maxSize', 'Records to return; default 200, at most 1000.', { type: 'integer', minimum: 0, maximum: 1000 }),
      sortBy: query('sortBy', 'Field to sort by; default id (creation order).', { type: 'string' }),
      asc: query('asc', 'Ascending (default) or descending.', { type: 'boolean' }),
      where: query('where', 'Conditions: bracket form `where[0][type]=equals&where[0][attribute]=name&where[0][value]=x`, or a JSON array.', { type: 'string' }),
      totalOnly: query('totalOnly', 'Answer `{total}` only.', { type: 'boolean' }),
      collectionOnly: query('collectionOnly', 'Answer `{list}` only, without counting.', { type: 'boolean' }),
      id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    },
    responses: {
      BadRequest: errorResponse('Invalid request'),
      Unauthorized: errorResponse('Missing, unknown or expired token'),
      NotFound: errorResponse('Unknown entity type or record'),
      Error: errorResponse('Error'),
    },
    schemas,
  };
}

function entityPaths(name: string, op: (verb: string) => string, generation: 'A' | 'B') {
  const tags = [name];
  const list: Operation = {
    operationId: op(`list${name}`),
    tags,
    summary: `List ${name} records`,
    parameters: [...LIST_PARAMS, ...READ_HEADERS].map(param),
    responses: { '200': ok(`A page of ${name} records`, ref(`${name}List`)), ...errorResponses },
  };
  const create: Operation = {
    operationId: op(`create${name}`),
    tags,
    summary: `Create a ${name}`,
    requestBody: { required: true, ...json(ref(`${name}Create`)) },
    responses: { '200': ok(`The created ${name}`, ref(name)), '409': { $ref: '#/components/responses/Error' }, ...errorResponses },
  };
  const read: Operation = {
    operationId: op(`get${name}`),
    tags,
    summary: `Read one ${name}`,
    parameters: [param('id'), param('select'), ...READ_HEADERS.map(param)],
    responses: { '200': ok(`The ${name}`, ref(name)), ...errorResponses },
  };
  const update = (verb: 'patch' | 'put'): Operation => ({
    operationId: op(`${verb === 'patch' ? 'update' : 'replace'}${name}`),
    tags,
    summary: `Update a ${name} (fields not sent stay unchanged)${verb === (generation === 'A' ? 'patch' : 'put') ? '' : '; same as ' + (generation === 'A' ? 'PATCH' : 'PUT')}`,
    parameters: [param('id'), ...READ_HEADERS.map(param)],
    requestBody: { required: true, ...json(ref(`${name}Update`)) },
    responses: { '200': ok(`The updated ${name}`, ref(name)), '409': { $ref: '#/components/responses/Error' }, ...errorResponses },
  });
  const remove: Operation = {
    operationId: op(`delete${name}`),
    tags,
    summary: `Delete a ${name} (soft unless the permanently header is sent)`,
    parameters: [param('id'), param('Permanently')],
    responses: { '200': ok('Deleted', { type: 'boolean', const: true }), ...errorResponses },
  };
  return { [`/${name}`]: { get: list, post: create }, [`/${name}/{id}`]: { get: read, patch: update('patch'), put: update('put'), delete: remove } };
}

function basePaths(schema: SchemaModel, fragments: readonly OpenApiFragment[], generation: 'A' | 'B') {
  const op = (id: string) => (generation === 'B' ? `v1_${id}` : id);
  const security = [{ basicAuth: [] }, { tokenAuth: [] }];
  const session = (suffix: string) => ({
    get: {
      operationId: op(`signIn${suffix}`),
      tags: ['Auth'],
      summary: 'Obtain a token with Basic credentials',
      security,
      parameters: [
        { name: 'Authorization-Token-Only', in: 'header', schema: { type: 'string', enum: ['true'] } },
        { name: 'Authorization-Token-Lifetime', in: 'header', schema: { type: 'number' }, description: 'Hours; 0 = no limit.' },
        { name: 'Authorization-Token-Idletime', in: 'header', schema: { type: 'number' }, description: 'Hours; 0 = no limit.' },
      ],
      responses: { '200': ok('The token (and the user with its rights)', ref('Session')), '401': { $ref: '#/components/responses/Unauthorized' }, default: { $ref: '#/components/responses/Error' } },
    },
    delete: {
      operationId: op(`signOut${suffix}`),
      tags: ['Auth'],
      summary: 'Revoke the token presented',
      responses: { '200': ok('Revoked', { type: 'boolean' }), '401': { $ref: '#/components/responses/Unauthorized' }, default: { $ref: '#/components/responses/Error' } },
    },
  });
  const metadata = (suffix: string) => ({
    get: { operationId: op(`metadata${suffix}`), tags: ['Metadata'], summary: 'The instance metadata', responses: { '200': ok('Metadata', { type: 'object' }), ...errorResponses } },
  });
  const paths: Record<string, unknown> = { '/userSession': session(''), '/metadata': metadata('') };
  if (generation === 'B') Object.assign(paths, { '/App/user': session('AppUser'), '/Metadata': metadata('Metadata') });
  paths['/entityRestore'] = {
    post: {
      operationId: op('entityRestore'),
      tags: ['Records'],
      summary: 'Restore soft-deleted records',
      requestBody: { required: true, ...json({ type: 'object', required: ['entityName', 'ids'], properties: { entityName: { type: 'string' }, ids: { type: 'array', items: { type: 'string' } } } }) },
      responses: { '200': ok('Restored count and errors', ref('RestoreResult')), ...errorResponses },
    },
  };
  for (const fragment of fragments) {
    for (const [path, item] of Object.entries(fragment.paths ?? {})) {
      paths[path] = prefixOperationIds(item as Record<string, Operation>, op);
    }
  }
  for (const name of schema.entities.keys()) Object.assign(paths, entityPaths(name, op, generation));
  return paths;
}

function prefixOperationIds(item: Record<string, Operation>, op: (id: string) => string) {
  return Object.fromEntries(
    Object.entries(item).map(([verb, operation]) => [
      verb,
      typeof operation === 'object' && operation && 'operationId' in operation ? { ...operation, operationId: op(String(operation.operationId)) } : operation,
    ]),
  );
}

/** The OpenAPI 3.1 document of both generations, built once from definitions and plugin fragments. */
export function buildOpenApi(input: OpenApiInput): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [base, generation] of [['/api', 'A'], ['/api/v1', 'B']] as const) {
    for (const [path, item] of Object.entries(basePaths(input.schema, input.fragments, generation))) paths[`${base}${path}`] = item;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: input.info?.title ?? 'Entity records API',
      version: input.info?.version ?? '1.0.0',
      description: input.info?.description ?? 'Records of every entity type under /api/ (generation A) and /api/v1/ (generation B).',
    },
    servers: [{ url: input.publicUrl ?? '/' }],
    security: [{ tokenAuth: [] }],
    tags: [
      { name: 'Auth' },
      { name: 'Metadata' },
      { name: 'Records' },
      ...input.fragments.flatMap((f) => f.tags ?? []),
      ...[...input.schema.entities.keys()].map((name) => ({ name })),
    ],
    paths,
    components: components(input.schema, input.fragments),
  };
}
