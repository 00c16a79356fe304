import SwaggerParser from '@apidevtools/swagger-parser';
import { definePlugin } from '@entity-records/core';
import type { TestApi } from '../../../../test/support/api';
import { openApiChecker } from '../../../../test/support/openapi-checker';
import { testEntities } from '../../../../test/support/fixtures';
import { BASES, headerNames, startWithDocument, type Doc, type Operation } from './support';

describe('OpenAPI request parameters without languages or _meta', () => {
  let t: TestApi;
  let doc: Doc;
  beforeAll(async () => ({ t, doc } = await startWithDocument('sqlite', { entities: testEntities })));
  afterAll(() => t.close());

  it.each(BASES)('documents neither With-Meta nor language under %s when nothing reads them (no _meta category, no languages)', (base) => {
    for (const name of ['Brand', 'Product']) {
      expect(headerNames(doc, doc.paths[`${base}/${name}`].get as Operation)).toEqual(['flatten-attributes']);
      expect(headerNames(doc, doc.paths[`${base}/${name}/{id}`].get as Operation)).toEqual(['if-match', 'if-none-match', 'flatten-attributes']);
    }
    const schemas = (doc.components as unknown as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
    expect(schemas.Product.properties._meta).toBeUndefined();
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
  beforeAll(async () => ({ t, doc } = await startWithDocument('sqlite', { entities: testEntities, plugins: [plugin], languages: ['en_US', 'de_DE'] })));
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
    expect(headerNames(doc, item.delete)).toEqual(['permanently', 'if-match', 'if-none-match']);
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
