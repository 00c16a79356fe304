import type { EntityModel, SchemaModel } from '../definition/normalize';
import type { RequestParameter } from '../plugin';
import { IDEMPOTENCY_KEY_PARAMETER } from './idempotency';
import { json, ref } from './refs';
import { parameterComponents } from './request-parameters';

/** List sizes shown in the `maxSize` parameter. */
export interface ListSizes {
  defaultListSize?: number;
  maxListSize?: number;
}

export const LIST_PARAMS = ['select', 'offset', 'maxSize', 'sortBy', 'asc', 'order', 'where', 'totalOnly', 'collectionOnly'];

/** Whether some entity type of the schema has attributes. */
export const hasAttributeTypes = (schema: SchemaModel): boolean => [...schema.entities.values()].some((m) => m.def.hasAttributes === true);

/** The list parameters of an entity type's lists (attributes only where it has them). */
export const listParams = (model: EntityModel | undefined) => [...LIST_PARAMS, ...(model?.def.hasAttributes ? ['attributes', 'allAttributes'] : [])];

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

/**
 * `Flatten-Attributes` on the bulk writes (upsert, upsertAsync, entityMassUpdate), documented
 * where some entity type has attributes: the attribute keys of their bodies.
 */
const FLATTEN_ATTRIBUTES_WRITES = header(
  'Flatten-Attributes',
  '`true`: an item\'s `payload` (upsert, upsertAsync) and the `values` of a mass update may set attribute values of a record of an entity type with attributes as virtual fields (keyed by attribute code, or id when it has none), as an update with this header does; a job keeps the header. Without it such a key is an unknown field (the item `Failed`, the mass update 400). The flattened fields are not described here; the attribute endpoints are.',
  ['true'],
);

/** The parameters of the components: request parameters, list parameters, `id` and `permanently` (and, with `attributes`, the bulk writes' `Flatten-Attributes`). */
export function componentParameters(sizes: ListSizes, requestParameters: readonly RequestParameter[], { attributes = false }: { attributes?: boolean } = {}) {
  const max = sizes.maxListSize ?? 1000;
  const size = sizes.defaultListSize ?? 200;
  return {
    ...parameterComponents(requestParameters),
    FlattenAttributesNone: header('Flatten-Attributes', 'Accepted; this entity type has no attributes, so the header changes nothing.', ['true']),
    ...(attributes && { FlattenAttributesWrites: FLATTEN_ATTRIBUTES_WRITES }),
    IfMatch: header('If-Match', 'Write only if the record is still at this version (its `ETag`); 412 CORE_PRECONDITION_FAILED otherwise. `*` matches any version.'),
    IfMatchRead: header('If-Match', 'Read only if the record is still at this version (its `ETag`); 412 CORE_PRECONDITION_FAILED otherwise, judged before If-None-Match. `*` matches any version.'),
    IfNoneMatch: header('If-None-Match', 'The `ETag` the client holds: 304 without a body while the record is still at that version.'),
    IfNoneMatchWrite: header('If-None-Match', 'Write only if the record is at none of these versions (its `ETag`s): naming its current version, or `*` (it exists), is 412 CORE_PRECONDITION_FAILED and nothing is written.'),
    IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER,
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
      ...json({ type: 'array', items: ref('WhereItem') }),
    },
    totalOnly: query('totalOnly', 'Answer `{total}` only.', { type: 'boolean' }),
    collectionOnly: query('collectionOnly', 'Answer `{list}` only, without counting.', { type: 'boolean' }),
    attributes: query('attributes', 'Comma-separated attribute ids (or codes) whose values each record shows (with `Flatten-Attributes: true`); `sortBy` may name one of them.', { type: 'string' }),
    allAttributes: query('allAttributes', '`true`: each record shows every attribute it has (with `Flatten-Attributes: true`).', { type: 'boolean' }),
    id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
  };
}
