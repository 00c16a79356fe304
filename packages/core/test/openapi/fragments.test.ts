import SwaggerParser from '@apidevtools/swagger-parser';
import { definePlugin } from '@entity-records/core';
import type { TestApi } from '../../../../test/support/api';
import { testEntities } from '../../../../test/support/fixtures';
import { BASES, operations, startWithDocument, type Doc, type Operation } from './support';

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
      api.onPresent('Brand', { adds: { score: { type: 'integer' } }, present: () => undefined });
      api.onPresent('*', { adds: { seenAt: { type: 'string' } }, present: () => undefined });
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
  beforeAll(async () => ({ t, doc } = await startWithDocument('sqlite', { entities: testEntities, plugins: [plugin, overriding] })));
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

  it('list the keys present hooks add in the read schemas of their entity types', () => {
    const { Brand, Product, BrandCreate } = doc.components.schemas;
    expect(Brand.properties?.score).toEqual({ type: 'integer', readOnly: true });
    expect(Brand.properties?.seenAt).toEqual({ type: 'string', readOnly: true });
    expect(Product.properties?.seenAt).toEqual({ type: 'string', readOnly: true });
    expect(Product.properties?.score).toBeUndefined();
    expect(BrandCreate.properties?.score).toBeUndefined();
  });

  it('merge tags of the same name', () => {
    expect(doc.tags?.filter((tag) => tag.name === 'Brand')).toEqual([{ name: 'Brand', description: 'Makers' }]);
    expect(doc.tags?.filter((tag) => tag.name === 'Thing')).toEqual([{ name: 'Thing', description: 'Things' }]);
  });
});
