import type { SchemaModel } from '../definition/normalize';
import type { OpenApiFragment, RequestParameter } from '../plugin';
import type { MetaCategory } from '../present';
import { ATTRIBUTE_SCHEMAS } from './attribute-schemas';
import { COOKIE_SESSION, SESSION } from './auth-paths';
import { bulkSchemas, RESTORE_RESULT } from './bulk-schemas';
import { errorBody, responseComponents } from './error-responses';
import { EVENT_SCHEMAS } from './event-paths';
import { JOB_RESULT_PAGE } from './job-paths';
import { METADATA } from './metadata-path';
import { componentParameters, hasAttributeTypes, type ListSizes } from './parameters';
import { entitySchemas, RECORD_LIST, WHERE_ITEM } from './record-schemas';

/** What the components are made of besides the definitions. */
export interface ComponentInput {
  fragments: readonly OpenApiFragment[];
  sizes?: ListSizes;
  /** Request parameters of record operations (core's and the plugins'). */
  parameters?: readonly RequestParameter[];
  /** `_meta` categories: records get an optional `_meta` when there is one. */
  metaCategories?: ReadonlyMap<string, MetaCategory>;
  /** Keys present hooks add to the records of an entity type, with their JSON Schema. */
  addedKeys?: (entity: string) => Record<string, Record<string, unknown>>;
  /** The error codes answers may carry. */
  errorCodes: readonly string[];
}

const SECURITY_SCHEMES = {
  tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization-Token', description: 'A token from GET /api/userSession.' },
  basicAuth: { type: 'http', scheme: 'basic', description: 'Only for obtaining a token.' },
  cookieAuth: {
    type: 'apiKey',
    in: 'cookie',
    name: 'er_session',
    description: 'The HttpOnly cookie set by POST /api/userSession/cookie. A request that changes data and is authenticated by the cookie alone needs the header `X-Requested-With: XMLHttpRequest` (403 without).',
  },
};

/** Every reusable part of the document; plugin schemas are merged last. */
export function components(schema: SchemaModel, input: ComponentInput) {
  const { fragments, sizes = {} } = input;
  const schemas: Record<string, unknown> = {
    Error: errorBody(input.errorCodes),
    Session: SESSION,
    CookieSession: COOKIE_SESSION,
    RestoreResult: RESTORE_RESULT,
    Metadata: METADATA,
    WhereItem: WHERE_ITEM,
    RecordList: RECORD_LIST,
    JobResultPage: JOB_RESULT_PAGE,
    ...ATTRIBUTE_SCHEMAS,
    ...EVENT_SCHEMAS,
    ...bulkSchemas(schema),
    ...entitySchemas(schema, { meta: input.metaCategories ?? new Map(), addedKeys: input.addedKeys }),
  };
  for (const f of fragments) Object.assign(schemas, f.components?.schemas ?? {});
  return {
    securitySchemes: SECURITY_SCHEMES,
    parameters: componentParameters(sizes, input.parameters ?? [], { attributes: hasAttributeTypes(schema) }),
    responses: responseComponents(),
    schemas,
  };
}
