import SwaggerParser from '@apidevtools/swagger-parser';
import { definePlugin } from '@entity-records/core';
import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { openApiChecker } from '../../../../test/support/openapi-checker';
import { testEntities } from '../../../../test/support/fixtures';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation | unknown>>;
  components: { securitySchemes: Record<string, unknown>; parameters: Record<string, { name: string; in: string }> };
  security?: unknown[];
  tags?: { name: string }[];
};
type Operation = { operationId?: string; responses?: Record<string, unknown>; parameters?: ({ $ref?: string; name?: string; in?: string })[] };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const BASES = ['/api', '/api/v1'];

/** Every operation of the document with its path and method. */
function operations(doc: Doc): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op: op as Operation })),
  );
}

/** Header names an operation documents, with `$ref` parameters resolved. */
function headerNames(doc: Doc, op: Operation): string[] {
  return (op.parameters ?? [])
    .map((p) => (p.$ref ? doc.components.parameters[p.$ref.replace('#/components/parameters/', '')] : p))
    .filter((p) => p?.in === 'header')
    .map((p) => String(p.name).toLowerCase());
}

async function fetchDocument(t: TestApi): Promise<Doc> {
  const res = await request(t.app).get('/apidocs/openapi.json').expect(200).expect('Content-Type', /application\/json/);
  return res.body as Doc;
}

describe('OpenAPI document', () => {
  let t: TestApi;
  let doc: Doc;
  beforeAll(async () => {
    t = await startTestApi('sqlite', { entities: testEntities });
    doc = await fetchDocument(t);
  });
  afterAll(() => t.close());

  it('is served without a token and validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('says of every object schema which properties it takes (generators read a bare object as empty)', () => {
    const bare: string[] = [];
    const visit = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${at}[${i}]`));
      const schema = node as Record<string, unknown>;
      const isObject = schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'));
      const open = ['properties', 'additionalProperties', 'patternProperties', 'oneOf', 'anyOf', 'allOf', '$ref'].some((k) => k in schema);
      if (isObject && !open) bare.push(at);
      for (const [key, value] of Object.entries(schema)) visit(value, `${at}.${key}`);
    };
    visit(doc, '');
    expect(bare).toEqual([]);
    expect(JSON.stringify(doc)).toContain('"additionalProperties":true');
  });

  it('is the same document api.openapi() returns', () => {
    expect(doc).toEqual(JSON.parse(JSON.stringify(t.api.openapi())));
  });

  it('gives every operation a unique operationId and responses', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(50);
    const ids = ops.map(({ op }) => op.operationId);
    for (const { path, method, op } of ops) {
      expect({ path, method, operationId: typeof op.operationId }).toEqual({ path, method, operationId: 'string' });
      expect({ path, method, responses: Object.keys(op.responses ?? {}).length > 0 }).toEqual({ path, method, responses: true });
    }
    const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(duplicates).toEqual([]);
  });

  it.each(BASES)('describes list, read, create, PATCH, PUT and delete of every entity under %s', (base) => {
    const entities = [...t.api.schema.entities.keys()];
    expect(entities).toEqual(expect.arrayContaining(['Brand', 'Category', 'Product', 'User']));
    for (const name of entities) {
      const collection = doc.paths[`${base}/${name}`] as Record<string, Operation>;
      const item = doc.paths[`${base}/${name}/{id}`] as Record<string, Operation>;
      expect({ name, collection: Object.keys(collection ?? {}).sort() }).toEqual({ name, collection: ['get', 'post'] });
      expect({ name, item: Object.keys(item ?? {}).sort() }).toEqual({ name, item: ['delete', 'get', 'patch', 'put'] });
    }
  });

  it('has the generation B names /api/v1/App/user and /api/v1/Metadata, and the shared names under both bases', () => {
    expect(Object.keys(doc.paths['/api/v1/App/user'] ?? {}).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/api/v1/Metadata'] ?? {})).toEqual(['get']);
    for (const base of BASES) {
      expect(doc.paths[`${base}/userSession`]).toBeDefined();
      expect(doc.paths[`${base}/metadata`]).toBeDefined();
      expect(doc.paths[`${base}/entityRestore`]).toBeDefined();
    }
    expect(doc.paths['/api/App/user']).toBeUndefined();
    for (const path of ['/api/userSession/cookie', '/api/v1/userSession/cookie', '/api/v1/App/user/cookie']) {
      expect(Object.keys(doc.paths[path] ?? {}).sort()).toEqual(['delete', 'post']);
    }
  });

  it('documents the linked-record routes: entityRelation in both generations, one path per link in generation B', () => {
    for (const base of BASES) expect(Object.keys(doc.paths[`${base}/entityRelation`] ?? {})).toEqual(['get']);
    for (const link of ['brand', 'categories']) {
      expect(Object.keys(doc.paths[`/api/v1/Product/{id}/${link}`] ?? {})).toEqual(['get']);
      expect(doc.paths[`/api/Product/{id}/${link}`]).toBeUndefined();
    }
    expect(doc.paths['/api/v1/Product/{id}/createdBy']).toBeUndefined();
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
    expect(schemas.MassUpdate).toMatchObject({ required: ['entityName', 'values'], oneOf: [{ required: ['ids'] }, { required: ['where'] }] });
    expect(schemas.MassUpdateResult).toMatchObject({ required: ['updated', 'errors'] });
    expect(schemas.JobStarted).toMatchObject({ required: ['jobId'] });
  });

  it('describes the upsert result item in both generations, and a job result as any JSON value', () => {
    for (const path of ['/api/upsert', '/api/v1/upsert', '/api/v1/MassActions/action/upsert']) {
      const op = doc.paths[path].post as Operation;
      expect(op.responses?.['200']).toMatchObject({ content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/UpsertResult' } } } } });
    }
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }> }).schemas;
    expect(schemas.UpsertResult.required).toEqual(['status', 'stored']);
    expect(schemas.UpsertResult.properties.status.enum).toEqual(['Created', 'Updated', 'NotModified', 'Failed']);
    expect(schemas.UpsertResult.properties.stored.type).toBe('boolean');
    expect(Object.keys(schemas.UpsertResult.properties).sort()).toEqual(['entity', 'message', 'status', 'stored']);
    expect(schemas.Job.properties.result.type).toEqual(['object', 'array', 'null']);
    expect(Object.keys(schemas.Job.properties)).toEqual(
      expect.arrayContaining(['id', 'type', 'status', 'progress', 'result', 'message', 'createdAt', 'startedAt', 'endedAt']),
    );
    expect(schemas.Job.properties.payload).toBeUndefined();
    expect(schemas.JobUpdate.properties.result).toBeUndefined();
  });

  it('only documents paths that exist under one of the two bases', () => {
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\/api\/(v1\/)?[A-Za-z]/);
  });

  it('declares the token as an apiKey scheme in the Authorization-Token header and requires it by default', () => {
    expect(doc.components.securitySchemes.tokenAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization-Token' });
    expect(doc.security).toContainEqual({ tokenAuth: [] });
    expect(doc.components.securitySchemes.cookieAuth).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'er_session' });
  });

  it.each(BASES)('documents neither With-Meta nor language under %s when nothing reads them (no _meta category, no languages)', (base) => {
    for (const name of ['Brand', 'Product']) {
      for (const op of [doc.paths[`${base}/${name}`].get, doc.paths[`${base}/${name}/{id}`].get] as Operation[]) {
        expect(headerNames(doc, op)).toEqual(['flatten-attributes']);
      }
    }
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
    expect(schemas.Product.properties._meta).toBeUndefined();
  });

  it('documents the error statuses records can answer with', () => {
    for (const base of BASES) {
      expect(Object.keys((doc.paths[`${base}/Product`].get as Operation).responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404']));
      expect(Object.keys((doc.paths[`${base}/Product`].post as Operation).responses ?? {})).toEqual(expect.arrayContaining(['409', '413']));
    }
    expect(Object.keys((doc.paths['/api/Product'].post as Operation).responses ?? {})).toContain('415');
    expect(Object.keys((doc.paths['/api/v1/Product'].post as Operation).responses ?? {})).not.toContain('415');
  });

  it('documents the list parameters on lists', () => {
    const list = doc.paths['/api/Product'].get as Operation;
    const names = (list.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string].name : p.name));
    expect(names).toEqual(expect.arrayContaining(['select', 'offset', 'maxSize', 'sortBy', 'asc', 'where', 'totalOnly', 'collectionOnly']));
  });

  it('describes records with the keys reads return', () => {
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> }).schemas;
    expect(Object.keys(schemas.Product.properties)).toEqual(
      expect.arrayContaining(['id', 'name', 'brandId', 'brandName', 'categoriesIds', 'categoriesNames', 'createdAt', 'createdById', 'createdByName']),
    );
    expect(schemas.User.properties.password).toBeUndefined();
    expect(schemas.UserCreate.properties.password).toMatchObject({ writeOnly: true });
    expect(schemas.ProductCreate.required).toEqual(['name']);
  });

  it('answers a read with a record that matches its schema (date-times are not RFC 3339)', async () => {
    const created = await t.post('/api/Product', { name: 'Chair', availableAt: '2024-05-01T10:00:00Z' }).expect(200);
    expect(created.body.availableAt).toBe('2024-05-01 10:00:00');
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, { format?: string; pattern?: string }> }> }).schemas;
    for (const key of ['availableAt', 'createdAt', 'modifiedAt']) {
      expect(schemas.Product.properties[key].format).not.toBe('date-time');
      expect(created.body[key]).toMatch(new RegExp(schemas.Product.properties[key].pattern as string));
    }
  });

  it('serves Swagger UI at /apidocs/', async () => {
    const res = await request(t.app).get('/apidocs/').expect(200).expect('Content-Type', /text\/html/);
    expect(res.text).toMatch(/swagger-ui/i);
    const init = await request(t.app).get('/apidocs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('openapi.json');
  });
});

describe('OpenAPI fragments of plugins', () => {
  let t: TestApi;
  let doc: Doc;
  const plugin = definePlugin({
    name: 'x',
    setup(api) {
      api.addOpenApi({
        paths: { '/Thing/ping': { get: { operationId: 'pingThing', responses: { '200': { description: 'ok' } } } } },
        tags: [{ name: 'Thing', description: 'Things' }],
      });
    },
  });
  const overriding = definePlugin({
    name: 'y',
    setup(api) {
      api.addOpenApi({
        paths: {
          '/Brand/{id}': { get: { operationId: 'readBrandSpecially', parameters: [{ $ref: '#/components/parameters/id' }], responses: { '200': { description: 'special' } } } },
          '/Thing/again': { post: { operationId: 'pingThing', responses: { '200': { description: 'ok' } } } },
          '/Thing/bare': { get: { summary: 'no id, no responses' } },
        },
        tags: [{ name: 'Brand', description: 'Makers' }],
      });
    },
  });
  beforeAll(async () => {
    t = await startTestApi('sqlite', { entities: testEntities, plugins: [plugin, overriding] });
    doc = await fetchDocument(t);
  });
  afterAll(() => t.close());

  it('appear under both bases with unique operationIds', async () => {
    const a = doc.paths['/api/Thing/ping']?.get as Operation;
    const b = doc.paths['/api/v1/Thing/ping']?.get as Operation;
    expect(a.responses).toEqual({ '200': { description: 'ok' } });
    expect(b.responses).toEqual({ '200': { description: 'ok' } });
    expect(a.operationId).toBe('pingThing');
    expect(b.operationId).not.toBe(a.operationId);
    const ids = operations(doc).map(({ op }) => op.operationId);
    expect(ids.filter((id) => id === a.operationId || id === b.operationId)).toHaveLength(2);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('replace the operation of the same path and method, keeping the others', () => {
    for (const base of BASES) {
      const item = doc.paths[`${base}/Brand/{id}`] as Record<string, Operation>;
      expect(item.get.responses).toEqual({ '200': { description: 'special' } });
      expect(Object.keys(item).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    }
  });

  it('get an operationId and responses when they lack them, and a reused id is made unique', () => {
    for (const base of BASES) {
      const bare = doc.paths[`${base}/Thing/bare`]?.get as Operation;
      expect(typeof bare.operationId).toBe('string');
      expect(Object.keys(bare.responses ?? {}).length).toBeGreaterThan(0);
    }
    expect((doc.paths['/api/Thing/again'].post as Operation).operationId).toBe('pingThing_2');
  });

  it('merge tags of the same name', () => {
    expect(doc.tags?.filter((tag) => tag.name === 'Brand')).toEqual([{ name: 'Brand', description: 'Makers' }]);
    expect(doc.tags?.filter((tag) => tag.name === 'Thing')).toEqual([{ name: 'Thing', description: 'Things' }]);
  });
});

describe('OpenAPI request parameters of the present stage and plugins', () => {
  let t: TestApi;
  let doc: Doc;
  const plugin = definePlugin({
    name: 'tagged',
    setup(api) {
      api.addMetaCategory('tagged', { schema: { type: 'boolean' }, provide: ({ records }) => records.map(() => true) });
      api.addParameter({ name: 'tagStyle', in: 'query', description: 'How tags look.', schema: { type: 'string', enum: ['a', 'b'] }, on: ['list'] });
    },
  });
  beforeAll(async () => {
    t = await startTestApi('sqlite', { entities: testEntities, plugins: [plugin], languages: ['en_US', 'de_DE'] });
    doc = await fetchDocument(t);
  });
  afterAll(() => t.close());

  const queryNames = (op: Operation) =>
    (op.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string] : p)).filter((p) => p?.in === 'query').map((p) => p.name);

  it.each(BASES)('documents With-Meta on reads and writes, language on reads only, under %s', (base) => {
    const ops = (doc.paths[`${base}/Product`] ?? {}) as Record<string, Operation>;
    const item = (doc.paths[`${base}/Product/{id}`] ?? {}) as Record<string, Operation>;
    for (const op of [ops.get, item.get, doc.paths[`${base}/entityRelation`].get as Operation]) {
      expect(headerNames(doc, op)).toEqual(expect.arrayContaining(['with-meta', 'language', 'flatten-attributes']));
    }
    for (const op of [ops.post, item.patch, item.put]) {
      expect(headerNames(doc, op)).toContain('with-meta');
      expect(headerNames(doc, op)).not.toContain('language');
    }
    expect(headerNames(doc, item.delete)).toEqual(['permanently']);
    expect(doc.components.parameters.Language).toMatchObject({ in: 'header', schema: { enum: ['en_US', 'de_DE', 'main'] } });
    expect(queryNames(ops.get)).toContain('tagStyle');
    expect(queryNames(item.get)).not.toContain('tagStyle');
  });

  it('documents the linked records of generation B with the read headers', () => {
    expect(headerNames(doc, doc.paths['/api/v1/Product/{id}/categories'].get as Operation)).toEqual(expect.arrayContaining(['with-meta', 'language']));
  });

  it('gives records an optional _meta with the categories, and stays valid', async () => {
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required: string[] }> }).schemas;
    expect(schemas.Product.properties._meta).toMatchObject({ type: 'object', additionalProperties: true, properties: { tagged: { type: 'boolean' } } });
    expect(schemas.Product.required).toEqual(['id']);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    const checker = openApiChecker(doc);
    await t.post('/api/Brand', { name: 'Meta maker' }).expect(200);
    const res = await t.get('/api/Brand').set('With-Meta', 'true').expect(200);
    expect(res.body.list[0]._meta).toEqual({ tagged: true });
    checker.response('/api/Brand', 'get', res);
  });
});

describe.each(TEST_DBS)('responses on %s match the document', (kind) => {
  let t: TestApi;
  let checker: ReturnType<typeof openApiChecker>;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    checker = openApiChecker(await fetchDocument(t));
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    /** Sends a request, checks its body against the request schema and the answer against the response schema. */
    async function call(method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, template: string, body?: unknown, valid = true) {
      if (body !== undefined && valid) checker.requestBody(`${base}${template}`, method, body);
      const res = await (method === 'delete' ? t.del(`${base}${path}`) : t[method](`${base}${path}`, body as object));
      checker.response(`${base}${template}`, method, res);
      return res;
    }

    it('for records of every field type, lists, updates, deletes and errors', async () => {
      const brand = await call('post', '/Brand', '/Brand', { name: `Maker ${base}`, code: 'MK' });
      expect(brand.status).toBe(200);
      const category = await call('post', '/Category', '/Category', { name: 'Chairs', code: `chairs-${base}` });
      const product = {
        name: 'Chair',
        sku: `CH-${base}`,
        mpn: base,
        description: 'A chair',
        price: 12.5,
        quantity: 3,
        isActive: false,
        releaseDate: '2024-02-29',
        availableAt: '2024-05-01T12:30:00+02:00',
        color: 'red',
        labels: ['new', 'eco'],
        specs: { legs: 4 },
        brandId: brand.body.id,
        categoriesIds: [category.body.id],
      };
      const created = await call('post', '/Product', '/Product', product);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ availableAt: '2024-05-01 10:30:00', brandName: `Maker ${base}` });
      const id = created.body.id as string;
      await call('post', '/Product', '/Product', { name: 'Bare', mpn: base });

      const mine = `where[0][type]=equals&where[0][attribute]=mpn&where[0][value]=${encodeURIComponent(base)}`;
      expect((await call('get', `/Product/${id}`, '/Product/{id}')).status).toBe(200);
      expect((await call('get', `/Product?${mine}&maxSize=5&sortBy=brand&asc=false`, '/Product')).body.list.length).toBe(2);
      expect((await call('get', `/Product?${mine}&totalOnly=true`, '/Product')).body).toEqual({ total: 2 });
      expect((await call('get', `/Product?${mine}&collectionOnly=true&select=name`, '/Product')).body.total).toBeUndefined();
      const where = encodeURIComponent(JSON.stringify([{ type: 'linkedWith', attribute: 'categories', value: [category.body.id] }]));
      expect((await call('get', `/Product?where=${where}`, '/Product')).body.total).toBe(1);
      expect((await call('get', `/Brand/${brand.body.id}`, '/Brand/{id}')).body.productsIds).toEqual([id]);
      expect((await call('get', '/User', '/User')).body.list[0].password).toBeUndefined();

      expect((await call('patch', `/Product/${id}`, '/Product/{id}', { quantity: 4, labels: [] })).status).toBe(200);
      expect((await call('put', `/Product/${id}`, '/Product/{id}', { availableAt: null })).status).toBe(200);
      expect((await call('post', '/Product', '/Product', { name: 'Again', sku: `CH-${base}` })).status).toBe(409);
      expect((await call('post', '/Product', '/Product', { name: 'Bad', quantity: 'x' }, false)).status).toBe(400);
      expect((await call('get', '/Product/nope', '/Product/{id}')).status).toBe(404);
      expect((await call('delete', `/Product/${id}`, '/Product/{id}')).body).toBe(true);
      const restored = await call('post', '/entityRestore', '/entityRestore', { entityName: 'Product', ids: [id] });
      expect(restored.body).toEqual({ restored: 1, errors: [] });
      expect((await call('get', '/metadata', '/metadata')).status).toBe(200);

      const upserted = await call('post', '/upsert', '/upsert', [
        { entity: 'Brand', payload: { name: `Upserted ${base}` } },
        { entity: 'Brand', payload: { name: `Upserted ${base}`, code: 'UP' } },
        { entity: 'Brand', payload: { name: 42 } },
      ]);
      expect(upserted.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Updated', 'Failed']);
      const related = await call('get', `/entityRelation?entityName=Product&id=${id}&link=categories`, '/entityRelation');
      expect(related.body.list.map((c: { id: string }) => c.id)).toEqual([category.body.id]);
      const linked = await call('post', '/Product', '/Product', { name: 'Stool', brand: { name: `Fresh ${base}` }, categories: [{ code: `chairs-${base}` }] });
      expect(linked.status).toBe(200);
      expect(linked.body.categoriesIds).toEqual([category.body.id]);
      expect(linked.body.brandName).toBe(`Fresh ${base}`);
      await call('post', '/Category', '/Category', { name: `Twin ${base}`, code: `twin-1-${base}` });
      await call('post', '/Category', '/Category', { name: `Twin ${base}`, code: `twin-2-${base}` });
      const ambiguous = await call('post', '/Product', '/Product', { name: 'Bench', categories: [{ name: `Twin ${base}` }] });
      expect(ambiguous.status).toBe(409);
      expect(ambiguous.body.error.code).toBe('CORE_CONFLICT');
    });

    it('for upsertAsync, the job it starts, and entityMassUpdate at once and as a job', async () => {
      /** Reads the job until it is done, checking every answer against the document. */
      const finished = async (jobId: string) => {
        for (let i = 0; i < 120; i++) {
          const job = await call('get', `/Job/${jobId}`, '/Job/{id}');
          expect(job.status).toBe(200);
          if (['Success', 'Failed', 'Canceled'].includes(job.body.status)) return job.body;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`job ${jobId} did not finish`);
      };
      const started = await call('post', '/upsertAsync', '/upsertAsync', [
        { entity: 'Brand', payload: { name: `Async ${base}` } },
        { entity: 'Brand', payload: { name: `Async ${base}`, code: 'AS' } },
        { entity: 'Brand', payload: { name: 42 } },
      ]);
      expect(started.status).toBe(200);
      const upsertJob = await finished(started.body.jobId);
      expect(upsertJob).toMatchObject({ type: 'upsert', status: 'Success', progress: 100 });
      expect(upsertJob.result.map((r: { status: string }) => r.status)).toEqual(['Created', 'Updated', 'Failed']);
      expect((await call('post', '/upsertAsync', '/upsertAsync', { entity: 'Brand' }, false)).status).toBe(400);

      const brand = upsertJob.result[0].entity.id as string;
      const now = await call('post', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Brand', ids: [brand, 'missing'], values: { code: 'M1' } });
      expect(now.body).toEqual({ updated: 1, errors: [expect.objectContaining({ id: 'missing', code: 'CORE_NOT_FOUND' })] });
      const patched = await call('patch', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Brand', ids: [brand], values: { code: 'M2' } });
      expect(patched.body).toEqual({ updated: 1, errors: [] });
      const byWhere = await call('post', '/entityMassUpdate', '/entityMassUpdate', {
        entityName: 'Brand',
        where: [{ type: 'equals', attribute: 'name', value: `Async ${base}` }],
        values: { code: 'M3' },
      });
      expect(typeof byWhere.body.jobId).toBe('string');
      expect(await finished(byWhere.body.jobId)).toMatchObject({ type: 'massUpdate', status: 'Success', result: { updated: 1, errors: [] } });
      expect((await call('post', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Brand', values: { code: 'x' } }, false)).status).toBe(400);
      expect((await call('patch', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Nope', ids: [brand], values: {} }, false)).status).toBe(404);
      expect((await call('get', '/Job/nope', '/Job/{id}')).status).toBe(404);
    });
  });

  it('for linked records in generation B', async () => {
    const brand = await t.post('/api/Brand', { name: 'Linked maker' }).expect(200);
    const product = await t.post('/api/Product', { name: 'Linked chair', brandId: brand.body.id }).expect(200);
    const res = await t.get(`/api/v1/Product/${product.body.id}/brand`).expect(200);
    expect(res.body.list.map((b: { id: string }) => b.id)).toEqual([brand.body.id]);
    checker.response('/api/v1/Product/{id}/brand', 'get', res);
    checker.response('/api/v1/Brand/{id}/products', 'get', await t.get(`/api/v1/Brand/${brand.body.id}/products?select=name`).expect(200));
    checker.response('/api/v1/Product/{id}/categories', 'get', await t.get('/api/v1/Product/nope/categories').expect(404));
  });

  it('for the generation B upsert name', async () => {
    const res = await t.post('/api/v1/MassActions/action/upsert', [{ entity: 'Category', payload: { name: 'Mass', code: 'mass' } }]).expect(200);
    checker.response('/api/v1/MassActions/action/upsert', 'post', res);
    expect(res.body[0]).toMatchObject({ status: 'Created', stored: true });
  });

  it('for generation B names and sign-in', async () => {
    checker.response('/api/v1/Metadata', 'get', await t.get('/api/v1/Metadata').expect(200));
    const session = await request(t.app).get('/api/v1/App/user').auth('admin', 'admin-test-password').expect(200);
    checker.response('/api/v1/App/user', 'get', session);
    checker.response('/api/userSession', 'get', await request(t.app).get('/api/userSession').expect(401));
    const cookie = await request(t.app).post('/api/v1/App/user/cookie').send({ userName: 'admin', password: 'admin-test-password' }).expect(200);
    checker.response('/api/v1/App/user/cookie', 'post', cookie);
    checker.response('/api/userSession/cookie', 'delete', await request(t.app).delete('/api/userSession/cookie').expect(200));
    const delegated = await request(t.app).get('/api/userSession').auth('admin', 'admin-test-password').set('Authorization-Delegate', 'nobody');
    checker.response('/api/userSession', 'get', delegated);
  });

  it('for throttled sign-ins', async () => {
    let last: request.Response | undefined;
    for (let i = 0; i < 12 && last?.status !== 429; i++) {
      last = await request(t.app).get('/api/v1/App/user').auth('ghost', 'wrong-password');
      checker.response('/api/v1/App/user', 'get', last);
    }
    expect(last?.status).toBe(429);
    expect(last?.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('for a role that may not read', async () => {
    const role = await t.post('/api/Role', { name: 'Brands only', scopes: { Brand: { read: 'all' } } }).expect(200);
    await t.post('/api/User', { userName: 'reader', password: 'reader-password', rolesIds: [role.body.id] }).expect(200);
    const session = await request(t.app).get('/api/userSession').auth('reader', 'reader-password').set('Authorization-Token-Only', 'true');
    const token = session.body.authorizationToken as string;
    const res = await request(t.app).get('/api/Product').set('Authorization-Token', token).expect(403);
    checker.response('/api/Product', 'get', res);
    checker.response('/api/v1/Brand', 'get', await request(t.app).get('/api/v1/Brand').set('Authorization-Token', token).expect(200));
  });
});
