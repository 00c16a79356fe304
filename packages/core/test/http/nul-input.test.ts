import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, startAttributeApi } from '../attributes/support';

/**
 * Text no record, field or parameter holds (a NUL, which PostgreSQL cannot even compare), in a
 * path or a query string: the same clear 4xx on both databases, never a 500, and nothing written.
 */
describe.each(TEST_DBS)('NUL characters in paths and query strings on %s', (kind) => {
  let t: TestApi;
  let productId: string;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    await createAttribute(t, { code: 'weight', type: 'float' });
    productId = (await t.post('/api/Product', { name: 'kept', sku: 'nul-kept' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  const products = async () => (await t.get('/api/Product?select=id,name&maxSize=1000').expect(200)).body;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('answers a path id with a NUL as any unknown id (404) on every route by id, and writes nothing', async () => {
      const before = await products();
      const sent = [
        await t.patch(`${base}/Product/a%00b`, { name: 'x' }),
        await t.put(`${base}/Product/a%00b`, { name: 'x' }),
        await t.patch(`${base}/Brand/a%00b`, { code: 'x' }),
        await t.del(`${base}/Product/a%00b`),
        await t.del(`${base}/Product/a%00b`).set('permanently', 'true'),
        await t.get(`${base}/Product/a%00b`),
      ];
      for (const res of sent) {
        expect([res.status, res.body.error?.code]).toEqual([404, 'CORE_NOT_FOUND']);
        expect(res.body.error.details.id).toBe('a\u0000b');
      }
      expect(await products()).toEqual(before);
    });
  });

  it('answers the public listening endpoint of an id with a NUL with 404', async () => {
    const res = await t.get('/listening/entity/Product/a%00b.json').expect(404);
    expect(res.body.error.code).toBe('CORE_NOT_FOUND');
    // A record someone listens to still answers.
    await t.post('/api/startEntityListening', { entityName: 'Product', entityId: productId }).expect(200);
    await t.get(`/listening/entity/Product/${productId}.json`).expect(200);
  });
});
