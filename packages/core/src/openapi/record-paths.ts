import { AttributeEntity } from '../attributes/entities';
import { isLinkField, type EntityModel, type SchemaModel } from '../definition/model';
import { bodyResponses, errorResponses, ETAG_HEADER, responseRef } from './error-responses';
import { idempotentOperation } from './idempotency';
import { LIST_PARAMS, listParams } from './parameters';
import { jsonBody, ok, param, ref, type GenerationContext, type Operation, type PathItem } from './refs';

/** What the generic record operations of core entity types do differently. */
const ENTITY_NOTES: Record<string, { create?: string; update?: string; read?: string }> = {
  Job: {
    read: 'A user who is not an admin sees the jobs they started, unless a role sets rights on Job. `result` holds the outcome once the job is done; a list leaves it out unless `select` names it (page it with GET /Job/{id}/result).',
    update: 'Only `{"status": "Canceled"}` is accepted (400 for anything else), and only while the job is `Pending` (409 afterwards).',
  },
  Webhook: {
    read: 'Admins only (403 for every other role, whatever it says). `secret` is never returned, nor accepted in `select` or `where`.',
    create: 'Admins only. `url` must be an absolute http or https URL; `entityTypes` names entity types of the instance and `actions` change actions (empty: all). `secret` signs every delivery.',
    update: 'Admins only. A `secret` sent replaces the stored one.',
  },
  WebhookDelivery: {
    read: 'Admins only. Written by the server alone: one per change and matching webhook, updated with every attempt. POST /WebhookDelivery/{id}/redeliver queues one again.',
  },
};

/** A 200 answer with one record, its version in `ETag`. */
const versioned = (description: string, schema: unknown) => ({ ...ok(description, schema), headers: { ETag: ETAG_HEADER } });

/**
 * The body of a create: the entity type's create schema, and for an attribute created through a
 * generation that requires its `code` (A), that one too, as a string (one schema serves both
 * generations; null is the absent code of B).
 */
function createBody(model: EntityModel, generation: GenerationContext['generation']): unknown {
  const body = ref(`${model.name}Create`);
  const coded = { required: ['code'], properties: { code: { type: 'string' } } };
  return model.name === AttributeEntity.name && generation.attributes.codeRequired ? { allOf: [body, coded] } : body;
}

/** List, create, read, update (PATCH and PUT) and delete of one entity type. */
export function entityPaths(model: EntityModel, { op, generation, extra }: GenerationContext): Record<string, PathItem> {
  const { name } = model;
  const tags = [name];
  const notes = ENTITY_NOTES[name] ?? {};
  const note = (text?: string) => (text ? { description: text } : {});
  const list: Operation = {
    operationId: op(`list${name}`),
    tags,
    summary: `List ${name} records`,
    parameters: [...listParams(model).map(param), ...extra('list', model)],
    responses: { '200': ok(`A page of ${name} records`, ref(`${name}List`)), ...errorResponses() },
  };
  const create: Operation = idempotentOperation({
    operationId: op(`create${name}`),
    tags,
    summary: `Create a ${name}`,
    ...note(notes.create),
    parameters: extra('create', model),
    requestBody: jsonBody(createBody(model, generation)),
    responses: { '200': versioned(`The created ${name}`, ref(name)), '409': responseRef('Conflict'), ...bodyResponses(generation), ...errorResponses() },
  });
  const read: Operation = {
    operationId: op(`get${name}`),
    tags,
    summary: `Read one ${name}`,
    ...note(notes.read),
    parameters: [param('id'), param('select'), param('IfMatchRead'), param('IfNoneMatch'), ...extra('read', model)],
    responses: { '200': versioned(`The ${name}`, ref(name)), '304': responseRef('NotModified'), '412': responseRef('PreconditionFailed'), ...errorResponses() },
  };
  const native = generation.updateVerb;
  const update = (verb: 'patch' | 'put'): Operation => ({
    operationId: op(`${verb === 'patch' ? 'update' : 'replace'}${name}`),
    tags,
    summary: `Update a ${name} (fields not sent stay unchanged)${verb === native ? '' : `; same as ${native.toUpperCase()}`}`,
    ...note(notes.update),
    parameters: [param('id'), param('IfMatch'), param('IfNoneMatchWrite'), ...extra('update', model)],
    requestBody: jsonBody(ref(`${name}Update`)),
    responses: { '200': versioned(`The updated ${name}`, ref(name)), '409': responseRef('Conflict'), '412': responseRef('PreconditionFailed'), ...bodyResponses(generation), ...errorResponses() },
  });
  const remove: Operation = {
    operationId: op(`delete${name}`),
    tags,
    summary: `Delete a ${name} (soft unless the permanently header is sent)`,
    parameters: [param('id'), param('Permanently'), param('IfMatch'), param('IfNoneMatchWrite')],
    responses: { '200': ok('Deleted', { type: 'boolean', const: true }), '412': responseRef('PreconditionFailed'), ...errorResponses() },
  };
  return {
    // Records the server makes (jobs) have no create operation: a client's create is 403.
    [`/${name}`]: model.def.serverCreated || model.def.serverWritten ? { get: list } : { get: list, post: create },
    // Records only the server writes (webhook deliveries) are read, never written, by clients.
    [`/${name}/{id}`]: model.def.serverWritten ? { get: read } : { get: read, patch: update('patch'), put: update('put'), delete: remove },
  };
}

/**
 * Generation B: the records one link of a record points at, one path per link: the links a record
 * shows, the system's `createdBy` and `modifiedBy` among them (a write-only link shows none, 404).
 */
export function linkedPaths(schema: SchemaModel, model: EntityModel, { op, extra }: GenerationContext): Record<string, PathItem> {
  const paths: Record<string, PathItem> = {};
  for (const f of model.fields) {
    if (f.def.writeOnly || !isLinkField(f)) continue;
    const target = schema.entity(f.target);
    const suffix = f.name.charAt(0).toUpperCase() + f.name.slice(1);
    paths[`/${model.name}/{id}/${f.name}`] = {
      get: {
        operationId: op(`list${model.name}${suffix}`),
        tags: [model.name],
        summary: `The ${f.target} records that ${f.name} of a ${model.name} links to`,
        ...(f.system && { description: `The ${f.target} the server stored in \`${f.name}\` (none when it is empty), with the caller's rights on ${f.target}. Written by the server only: POST and DELETE on this path are 404.` }),
        parameters: [param('id'), ...listParams(target).map(param), ...extra('linked', target)],
        responses: { '200': ok(`A page of ${f.target} records`, ref(`${f.target}List`)), ...errorResponses() },
      },
    };
  }
  return paths;
}

/** Both generations: the records a link of a record points at, named in the query. */
export function relationPath({ op, extra }: GenerationContext): PathItem {
  const required = (name: string, description: string) => ({ name, in: 'query', required: true, description, schema: { type: 'string' } });
  return {
    get: {
      operationId: op('entityRelation'),
      tags: ['Records'],
      summary: 'The records one link of a record points at',
      parameters: [
        required('entityName', 'The entity type of the record.'),
        required('id', 'The id of the record.'),
        required('link', 'The name of the link field (`categories`, `brand`), or a link the server writes (`createdBy`, `modifiedBy`).'),
        ...[...LIST_PARAMS, 'attributes', 'allAttributes'].map(param),
        ...extra('linked'),
      ],
      responses: { '200': ok('A page of linked records', ref('RecordList')), ...errorResponses() },
    },
  };
}
