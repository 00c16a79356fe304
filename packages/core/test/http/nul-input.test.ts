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

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('refuses a query string with a NUL or bytes that are not UTF-8 (400 CORE_INVALID_QUERY), alike on both databases, and writes nothing', async () => {
      const before = await products();
      const where = (items: unknown[]) => `where=${encodeURIComponent(JSON.stringify(items))}`;
      const queries = [
        `${base}/Product?attributes=a%00b`,
        `${base}/Product?where[0][type]=equals&where[0][attribute]=a%00b&where[0][isAttribute]=true&where[0][value]=1`,
        `${base}/Product?where[0][type]=equals&where[0][attribute]=name&where[0][value]=kept%FF`,
        `${base}/Product?select=name&note=%FF`,
        `${base}/Product?select=name&x%FF=1`,
        `${base}/entityRelation?entityName=Brand&id=a%00b&link=products`,
      ];
      for (const path of queries) {
        const res = await t.get(path);
        expect([res.status, res.body.error?.code]).toEqual([400, 'CORE_INVALID_QUERY']);
      }
      const unlink = await t.del(`${base}/Brand/x/products?id=%FF`);
      expect([unlink.status, unlink.body.error?.code]).toEqual([400, 'CORE_INVALID_QUERY']);
      // A NUL escaped inside a where in JSON form names no attribute either.
      const json = await t.get(`${base}/Product?${where([{ type: 'equals', attribute: 'a\u0000b', isAttribute: true, value: 1 }])}`);
      expect([json.status, json.body.error?.code, json.body.error?.details]).toEqual([400, 'CORE_INVALID_QUERY', { attribute: 'a\u0000b' }]);
      // Percent-encoded UTF-8 is read as ever.
      const found = await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=sku&where[0][value]=nul%2Dkept&select=name`).expect(200);
      expect(found.body.list).toEqual([{ id: productId, name: 'kept' }]);
      await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=name&where[0][value]=gr%C3%BC%C3%9Fe&totalOnly=true`).expect(200);
      // A `%` that starts no escape is itself, as ever: a like pattern sent unencoded.
      const like = await t.get(`${base}/Product?where[0][type]=like&where[0][attribute]=name&where[0][value]=kep%&select=name`).expect(200);
      expect(like.body.list).toEqual([{ id: productId, name: 'kept' }]);
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
