import type { SchemaModel } from '../definition/normalize';
import { ERROR_STATUS } from '../errors';
import type { OpenApiFragment } from '../plugin';
import { MASS_UPDATE_SYNC_LIMIT } from '../http/bulk-routes';
import { WHERE_OPERATORS } from '../sql/where';
import { ATTRIBUTE_SCHEMAS } from './attribute-schemas';
import type { MetaCategory } from '../present';
import type { RequestParameter } from '../plugin';
import { readSchema, writeSchema } from './entity-schemas';
import { parameterComponents } from './request-parameters';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });

/** List sizes shown in the `maxSize` parameter. */
export interface ListSizes {
  defaultListSize?: number;
  maxListSize?: number;
}

const ERROR_BODY = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'See docs/reference/errors.md.', examples: Object.keys(ERROR_STATUS) },
        message: { type: 'string' },
        details: { type: 'object', description: 'Validation failures carry `issues: [{path, code, message}]`.' },
      },
    },
  },
};

const SESSION = {
  type: 'object',
  required: ['authorizationToken'],
  properties: {
    authorizationToken: { type: 'string' },
    user: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        userName: { type: 'string' },
        name: { type: ['string', 'null'] },
        isAdmin: { type: 'boolean' },
        rolesIds: { type: 'array', items: { type: 'string' } },
      },
    },
    actor: {
      type: 'object',
      description: 'In a delegated session: the admin acting for `user`.',
      properties: { id: { type: 'string' }, userName: { type: 'string' }, name: { type: ['string', 'null'] } },
    },
    acl: { type: 'object', description: 'Per entity type: `{create, read, edit, delete, stream}`.' },
  },
};

/** The cookie sign-in answers the session without the token (the cookie carries it). */
const COOKIE_SESSION = {
  type: 'object',
  required: ['user', 'acl'],
  properties: { user: SESSION.properties.user, actor: SESSION.properties.actor, acl: SESSION.properties.acl },
};

const RESTORE_RESULT = {
  type: 'object',
  required: ['restored', 'errors'],
  properties: {
    restored: { type: 'integer' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

const METADATA = {
  type: 'object',
  required: ['entityDefs', 'scopes', 'fields', 'app'],
  properties: {
    entityDefs: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { fields: { type: 'object' }, links: { type: 'object' }, uniqueIndexes: { type: 'object' } },
      },
    },
    scopes: { type: 'object', additionalProperties: { type: 'object' } },
    fields: { type: 'object', description: 'The field type catalogue.' },
    app: {
      type: 'object',
      properties: { languages: { type: 'array', items: { type: 'string' } }, thumbnailTypes: { type: 'object' } },
    },
  },
};

const WHERE_ITEM = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: WHERE_OPERATORS },
    attribute: { type: 'string', description: 'A field name (`name`, `brandId`, `categories`), or with `isAttribute: true` an attribute id or code.' },
    value: { description: 'A value, a list of values, or for `and`, `or` and `not` a list of conditions.' },
    isAttribute: { type: 'boolean', description: '`true`: `attribute` names an attribute of the entity type (its main value is compared).' },
    timeZone: { type: 'string', description: 'IANA time zone of the date operators; default UTC.' },
  },
};

function entitySchemas(schema: SchemaModel, meta: ReadonlyMap<string, MetaCategory>): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const model of schema.entities.values()) {
    schemas[model.name] = readSchema(model, meta);
    schemas[`${model.name}Create`] = writeSchema(model, 'create');
    schemas[`${model.name}Update`] = writeSchema(model, 'update');
    schemas[`${model.name}List`] = {
      type: 'object',
      description: '`total` is absent with `collectionOnly=true`, `list` with `totalOnly=true`.',
      properties: { total: { type: 'integer' }, list: { type: 'array', items: ref(model.name) } },
    };
  }
  return schemas;
}

function upsertSchemas(schema: SchemaModel) {
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
      required: ['entityName', 'values'],
      description: 'Give either `ids` or `where`.',
      oneOf: [{ required: ['ids'] }, { required: ['where'] }],
      properties: {
        entityName: entityName,
        ids: {
          type: 'array',
          items: { type: 'string' },
          description: `Records to update. Up to ${MASS_UPDATE_SYNC_LIMIT} are updated before the answer; more run as a job.`,
        },
        where: { type: 'array', items: ref('WhereItem'), description: 'Conditions selecting the records, with the caller’s rights; always runs as a job.' },
        values: { type: 'object', description: 'The fields to set on every record, as in an update of the entity type.' },
      },
    },
    MassUpdateResult: {
      type: 'object',
      required: ['updated', 'errors'],
      properties: {
        updated: { type: 'integer', description: 'Records updated.' },
        errors: {
          type: 'array',
          description: 'One entry per record that could not be updated; the others are updated.',
          items: {
            type: 'object',
            required: ['id', 'code', 'message'],
            properties: { id: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
  };
}

/** A page of records of whatever type a link points at. */
const RECORD_LIST = {
  type: 'object',
  properties: { total: { type: 'integer' }, list: { type: 'array', items: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } } },
};

const header = (name: string, description: string, values?: string[]) => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: values ? { type: 'string', enum: values } : { type: 'string' },
});
const query = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

function parameters(sizes: ListSizes, requestParameters: readonly RequestParameter[]) {
  const max = sizes.maxListSize ?? 1000;
  const size = sizes.defaultListSize ?? 200;
  return {
    ...parameterComponents(requestParameters),
    FlattenAttributesNone: header('Flatten-Attributes', 'Accepted; this entity type has no attributes, so the header changes nothing.', ['true']),
    Permanently: header('permanently', '`true` (or `1`) removes the row instead of soft-deleting it.', ['true', '1']),
    select: query('select', 'Comma-separated field names to return (`id` is always returned).', { type: 'string' }),
    offset: query('offset', 'Records to skip; default 0.', { type: 'integer', minimum: 0 }),
    maxSize: query('maxSize', `Records to return; default ${size}, at most ${max}.`, { type: 'integer', minimum: 0, maximum: max }),
    sortBy: query('sortBy', 'Field to sort by; default `id` (creation order). A link sorts by the linked name. `orderBy` is an alias.', { type: 'string' }),
    asc: query('asc', 'Ascending (default) or descending.', { type: 'boolean' }),
    order: query('order', '`asc` or `desc`; read when `asc` is absent.', { type: 'string', enum: ['asc', 'desc'] }),
    where: {
      name: 'where',
      in: 'query',
      required: false,
      description:
        'Conditions, ANDed: a JSON array (as here), or the bracket form `where[0][type]=equals&where[0][attribute]=name&where[0][value]=x`.',
      content: { 'application/json': { schema: { type: 'array', items: ref('WhereItem') } } },
    },
    totalOnly: query('totalOnly', 'Answer `{total}` only.', { type: 'boolean' }),
    collectionOnly: query('collectionOnly', 'Answer `{list}` only, without counting.', { type: 'boolean' }),
    attributes: query('attributes', 'Comma-separated attribute ids (or codes) whose values each record shows (with `Flatten-Attributes: true`); `sortBy` may name one of them.', { type: 'string' }),
    allAttributes: query('allAttributes', '`true`: each record shows every attribute it has (with `Flatten-Attributes: true`).', { type: 'boolean' }),
    id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
  };
}

/** Error responses carry the message again in `X-Status-Reason`, which AtroCore clients read. */
const errorResponse = (description: string) => ({
  description,
  headers: { 'X-Status-Reason': { description: 'The error message.', schema: { type: 'string' } } },
  ...json(ref('Error')),
});

/** What the components are made of besides the definitions. */
export interface ComponentInput {
  fragments: readonly OpenApiFragment[];
  sizes?: ListSizes;
  /** Request parameters of record operations (core's and the plugins'). */
  parameters?: readonly RequestParameter[];
  /** `_meta` categories: records get an optional `_meta` when there is one. */
  metaCategories?: ReadonlyMap<string, MetaCategory>;
}

/** Every reusable part of the document; plugin schemas are merged last. */
export function components(schema: SchemaModel, input: ComponentInput) {
  const { fragments, sizes = {} } = input;
  const schemas: Record<string, unknown> = {
    Error: ERROR_BODY,
    Session: SESSION,
    CookieSession: COOKIE_SESSION,
    RestoreResult: RESTORE_RESULT,
    Metadata: METADATA,
    WhereItem: WHERE_ITEM,
    RecordList: RECORD_LIST,
    ...ATTRIBUTE_SCHEMAS,
    ...upsertSchemas(schema),
    ...entitySchemas(schema, input.metaCategories ?? new Map()),
  };
  for (const f of fragments) Object.assign(schemas, f.components?.schemas ?? {});
  return {
    securitySchemes: {
      tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization-Token', description: 'A token from GET /api/userSession.' },
      basicAuth: { type: 'http', scheme: 'basic', description: 'Only for obtaining a token.' },
      cookieAuth: {
        type: 'apiKey',
        in: 'cookie',
        name: 'er_session',
        description: 'The HttpOnly cookie set by POST /api/userSession/cookie. A request that changes data and is authenticated by the cookie alone needs the header `X-Requested-With: XMLHttpRequest` (403 without).',
      },
    },
    parameters: parameters(sizes, input.parameters ?? []),
    responses: {
      BadRequest: errorResponse('Malformed JSON, a wrong type, an unknown field or a bad query parameter'),
      Unauthorized: errorResponse('Missing, unknown, expired or revoked token'),
      Forbidden: errorResponse('The role does not allow this action, or a field named in select, sortBy or where is not readable'),
      NotFound: errorResponse('Unknown entity type or record, or a record the caller may not see'),
      Conflict: errorResponse('A unique field or index already holds the value, a link object matches several records, or a job is no longer pending'),
      PayloadTooLarge: errorResponse('The body is larger than the instance allows'),
      UnsupportedMediaType: errorResponse('Generation A: a body that is not application/json'),
      TooManyRequests: {
        ...errorResponse('Too many failed sign-ins for this user name or address'),
        headers: {
          'X-Status-Reason': { description: 'The error message.', schema: { type: 'string' } },
          'Retry-After': { description: 'Seconds until a sign-in is accepted again.', schema: { type: 'integer' } },
        },
      },
      Error: errorResponse('Any other error (500 with a request id, 503 when the database is unavailable)'),
    },
    schemas,
  };
}
