import type { TestApi } from '../../../../test/support/api';
import { testEntities } from '../../../../test/support/fixtures';
import { BASES, headerNames, startWithDocument, type Doc, type Operation } from './support';

describe('OpenAPI paths of records, bulk operations and sessions', () => {
  let t: TestApi;
  let doc: Doc;
  beforeAll(async () => ({ t, doc } = await startWithDocument('sqlite', { entities: testEntities })));
  afterAll(() => t.close());

  it.each(BASES)('describes list, read, create, PATCH, PUT and delete of every entity under %s', (base) => {
    const entities = [...t.api.schema.entities.keys()];
    expect(entities).toEqual(expect.arrayContaining(['Brand', 'Category', 'Product', 'User', 'WebhookDelivery']));
    for (const name of entities) {
      const collection = doc.paths[`${base}/${name}`] as Record<string, Operation>;
      const item = doc.paths[`${base}/${name}/{id}`] as Record<string, Operation>;
      // Jobs are made by the server: no create is offered; webhook deliveries are also written by it alone: reads only.
      const def = t.api.schema.entity(name)?.def;
      const creatable = !def?.serverCreated && !def?.serverWritten;
      expect({ name, collection: Object.keys(collection ?? {}).sort() }).toEqual({ name, collection: creatable ? ['get', 'post'] : ['get'] });
      expect({ name, item: Object.keys(item ?? {}).sort() }).toEqual({ name, item: def?.serverWritten ? ['get'] : ['delete', 'get', 'patch', 'put'] });
    }
  });

  it('requires the code of an attribute created through generation A only, as the route does', () => {
    const body = (base: string) => ((doc.paths[`${base}/Attribute`] as Record<string, Operation>).post.requestBody as { content: Record<string, { schema: unknown }> }).content['application/json'].schema;
    expect(body('/api')).toEqual({ allOf: [{ $ref: '#/components/schemas/AttributeCreate' }, { required: ['code'], properties: { code: { type: 'string' } } }] });
    expect(body('/api/v1')).toEqual({ $ref: '#/components/schemas/AttributeCreate' });
    // What the routes do (400 without code through /api/ only) is tested with the attributes.
  });

  it('has the generation B names /api/v1/App/user and /api/v1/Metadata, and the shared names under both bases', () => {
    expect(Object.keys(doc.paths['/api/v1/App/user'] ?? {}).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/api/v1/Metadata'] ?? {})).toEqual(['get']);
    for (const base of BASES) {
      expect(doc.paths[`${base}/userSession`]).toBeDefined();
      expect(doc.paths[`${base}/metadata`]).toBeDefined();
      // A `language` header naming no language of the instance is 400 there too.
      expect(Object.keys((doc.paths[`${base}/metadata`]?.get as Operation | undefined)?.responses ?? {}).sort()).toEqual(['200', '400', '401', 'default']);
      expect(doc.paths[`${base}/entityRestore`]).toBeDefined();
    }
    expect(doc.paths['/api/App/user']).toBeUndefined();
    for (const path of ['/api/userSession/cookie', '/api/v1/userSession/cookie', '/api/v1/App/user/cookie']) {
      expect(Object.keys(doc.paths[path] ?? {}).sort()).toEqual(['delete', 'post']);
      // signing out by cookie alone needs X-Requested-With
      expect(Object.keys((doc.paths[path].delete as Operation).responses ?? {})).toContain('403');
    }
    expect(Object.keys((doc.paths['/api/userSession'].delete as Operation).responses ?? {})).toContain('403');
  });

  it('documents the linked-record routes: entityRelation in both generations, one path per link, listed in generation B and linked or unlinked in both (the server\'s links listed only)', () => {
    for (const base of BASES) expect(Object.keys(doc.paths[`${base}/entityRelation`] ?? {})).toEqual(['get']);
    for (const link of ['brand', 'categories']) {
      expect(Object.keys(doc.paths[`/api/v1/Product/{id}/${link}`] ?? {})).toEqual(['get', 'post', 'delete']);
      expect(Object.keys(doc.paths[`/api/Product/{id}/${link}`] ?? {})).toEqual(['post', 'delete']);
    }
    // the server's links are listed in generation B, never written; its write-only actors not even listed
    for (const link of ['createdBy', 'modifiedBy']) expect(Object.keys(doc.paths[`/api/v1/Product/{id}/${link}`] ?? {})).toEqual(['get']);
    for (const link of ['createdBy', 'createdByActor']) expect(doc.paths[`/api/Product/{id}/${link}`]).toBeUndefined();
    expect(doc.paths['/api/v1/Product/{id}/createdByActor']).toBeUndefined();
    // records only the server writes offer their links to read, never to change
    expect(Object.keys(doc.paths['/api/v1/WebhookDelivery/{id}/webhook'] ?? {})).toEqual(['get']);
    expect(doc.paths['/api/WebhookDelivery/{id}/webhook']).toBeUndefined();
  });

  it('documents the change routes: the event stream as text/event-stream, the record stream, listening and the public routes without a token', () => {
    for (const base of BASES) {
      const events = doc.paths[`${base}/events`].get as Operation;
      expect(Object.keys((events.responses as Record<string, { content?: object }>)['200'].content ?? {})).toEqual(['text/event-stream']);
      expect(Object.keys(doc.paths[`${base}/entityStream`] ?? {})).toEqual(['get']);
      expect(Object.keys(doc.paths[`${base}/startEntityListening`] ?? {})).toEqual(['post']);
    }
    expect(Object.keys(doc.paths['/api/v1/Product/{id}/stream'] ?? {})).toEqual(['get']);
    expect(Object.keys(doc.paths['/api/Product/{id}/stream'] ?? {})).toEqual(['get']);
    for (const path of ['/listening/entity/{entity}/{id}.json', '/data/publicData.json']) expect((doc.paths[path].get as Operation & { security?: unknown }).security).toEqual([]);
  });

  it('documents versions: ETag on single answers, If-None-Match and 304 on reads, If-Match and 412 on updates and deletes', () => {
    for (const base of BASES) {
      const item = doc.paths[`${base}/Product/{id}`] as Record<string, Operation>;
      const responses = (op: Operation) => op.responses as Record<string, { headers?: object }>;
      expect(responses(item.get)['200'].headers).toHaveProperty('ETag');
      expect(responses(item.get)).toHaveProperty('304');
      expect(item.get.parameters).toContainEqual({ $ref: '#/components/parameters/IfNoneMatch' });
      for (const op of [item.patch, item.put, item.delete]) {
        expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/IfMatch' });
        expect(responses(op)).toHaveProperty('412');
      }
      expect(responses((doc.paths[`${base}/Product`] as Record<string, Operation>).post)['200'].headers).toHaveProperty('ETag');
    }
  });

  it('documents upsertAsync and entityMassUpdate under both bases, with generation B ids prefixed', () => {
    for (const [base, prefix] of [['/api', ''], ['/api/v1', 'v1_']]) {
      expect(Object.keys(doc.paths[`${base}/upsertAsync`] ?? {})).toEqual(['post']);
      expect(Object.keys(doc.paths[`${base}/entityMassUpdate`] ?? {}).sort()).toEqual(['patch', 'post']);
      const upsertAsync = doc.paths[`${base}/upsertAsync`].post as Operation & { requestBody: unknown };
      expect(upsertAsync.operationId).toBe(`${prefix}upsertAsync`);
      expect(upsertAsync.requestBody).toMatchObject({ content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/UpsertItem' } } } } });
      expect(upsertAsync.responses?.['200']).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/JobStarted' } } } });
      for (const method of ['post', 'patch']) {
        const mass = doc.paths[`${base}/entityMassUpdate`][method] as Operation & { requestBody: unknown };
        expect(mass.operationId).toBe(`${prefix}${method === 'post' ? 'entityMassUpdate' : 'entityMassUpdatePatch'}`);
        expect(mass.requestBody).toMatchObject({ content: { 'application/json': { schema: { $ref: '#/components/schemas/MassUpdate' } } } });
        expect(mass.responses?.['200']).toMatchObject({
          content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/MassUpdateResult' }, { $ref: '#/components/schemas/JobStarted' }] } } },
        });
        expect(Object.keys(mass.responses ?? {})).toEqual(expect.arrayContaining(['400', '401', '403', '404', '413']));
      }
      for (const method of ['get', 'patch', 'put', 'delete']) expect(doc.paths[`${base}/Job/{id}`][method]).toBeDefined();
    }
    const schemas = (doc.components as unknown as { schemas: Record<string, Record<string, unknown>> }).schemas;
    expect(schemas.MassUpdate).toMatchObject({
      required: ['entityName'],
      oneOf: [{ required: ['ids'] }, { required: ['where'] }],
      // values, link changes, or both: a mass update of links alone sends no values
      anyOf: [{ required: ['values'] }, { required: ['addLinks'] }, { required: ['removeLinks'] }],
      properties: { addLinks: { type: 'object', additionalProperties: { type: 'array', minItems: 1 } }, removeLinks: { type: 'object' } },
    });
    expect(schemas.MassUpdateResult).toMatchObject({ required: ['updated', 'errors'] });
    expect(schemas.JobStarted).toMatchObject({ required: ['jobId'] });
  });

  it('leaves Flatten-Attributes off the bulk writes of an instance whose entity types have no attributes', () => {
    for (const base of BASES) {
      for (const [path, method] of [['/upsert', 'post'], ['/upsertAsync', 'post'], ['/entityMassUpdate', 'post'], ['/entityMassUpdate', 'patch']]) {
        expect({ path, headers: headerNames(doc, doc.paths[`${base}${path}`][method] as Operation) }).toEqual({ path, headers: ['idempotency-key'] });
      }
    }
    expect(doc.components.parameters.FlattenAttributesWrites).toBeUndefined();
  });

  it('documents the error statuses records can answer with', () => {
    for (const base of BASES) {
      expect(Object.keys((doc.paths[`${base}/Product`].get as Operation).responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
      expect(Object.keys((doc.paths[`${base}/Product`].post as Operation).responses ?? {})).toEqual(expect.arrayContaining(['409', '413']));
    }
    // Both generations answer 415 to a body they cannot read as JSON text (generation A also to a non-JSON type).
    expect(Object.keys((doc.paths['/api/Product'].post as Operation).responses ?? {})).toContain('415');
    expect(Object.keys((doc.paths['/api/v1/Product'].post as Operation).responses ?? {})).toContain('415');
  });

  it('documents the list parameters on lists', () => {
    const list = doc.paths['/api/Product'].get as Operation;
    const names = (list.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string].name : p.name));
    expect(names).toEqual(expect.arrayContaining(['select', 'offset', 'maxSize', 'sortBy', 'asc', 'where', 'totalOnly', 'collectionOnly']));
  });
});
