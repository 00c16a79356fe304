import { defineEntity } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';

/**
 * A pair of a many-to-many link whose other record is in the bin is invisible (CONTRACT §5) and a
 * link write leaves it alone, on every route alike (§15): it shows in no list, answer or diff, no
 * write removes it or counts it as a change, and the record gets it back when restored.
 */
const Category = defineEntity({
  name: 'Category',
  fields: { name: { type: 'varchar', required: true }, products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' } },
});
const Product = defineEntity({
  name: 'Product',
  fields: { name: { type: 'varchar', required: true }, categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' } },
});

describe.each(TEST_DBS)('pairs with a record in the bin on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Category, Product] });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    const upsertPath = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
    const changesOf = async (entity: string, id: string) => (await t.get(`/api/entityStream?entityName=${entity}&id=${id}`).expect(200)).body.list as { diff: unknown }[];

    /** A category linked to a product now in the bin, and a live product to link. */
    async function setUp(n: string) {
      const category = (await t.post(`${base}/Category`, { name: `C ${n}` }).expect(200)).body.id as string;
      const binned = (await t.post(`${base}/Product`, { name: `In the bin ${n}`, categoriesIds: [category] }).expect(200)).body.id as string;
      const live = (await t.post(`${base}/Product`, { name: `Live ${n}` }).expect(200)).body.id as string;
      await t.del(`${base}/Product/${binned}`).expect(200);
      return { category, binned, live };
    }

    const writes: [string, (s: { category: string; live: string; binned: string }) => Promise<unknown>][] = [
      ['PATCH', (s) => t.patch(`${base}/Category/${s.category}`, { productsIds: [s.live] }).expect(200)],
      ['PUT', (s) => t.put(`${base}/Category/${s.category}`, { productsIds: [s.live] }).expect(200)],
      ['link route', (s) => t.post(`${base}/Category/${s.category}/products`, { id: s.live }).expect(200)],
      ['link route of the other side', (s) => t.post(`${base}/Product/${s.live}/categories`, { id: s.category }).expect(200)],
      ['upsert', (s) => t.post(upsertPath, [{ entity: 'Category', payload: { id: s.category, productsIds: [s.live] } }]).expect(200)],
      ['mass update addLinks', (s) => t.post(`${base}/entityMassUpdate`, { entityName: 'Category', ids: [s.category], addLinks: { products: [s.live] } }).expect(200)],
      ['mass update values', (s) => t.post(`${base}/entityMassUpdate`, { entityName: 'Category', ids: [s.category], values: { productsIds: [s.live] } }).expect(200)],
    ];

    it.each(writes)('a write of the list by %s keeps the pair, and no answer or change names the record in the bin', async (route, write) => {
      const s = await setUp(`${g} ${route}`);
      await write(s);
      const read = (await t.get(`${base}/Category/${s.category}`).expect(200)).body;
      expect(read.productsIds).toEqual([s.live]);
      const [last] = await changesOf('Category', s.category);
      expect(last.diff).toEqual({ productsIds: { was: [], became: [s.live] } });
      expect(JSON.stringify(await changesOf('Product', s.live))).not.toContain(s.binned);
      await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [s.binned] }).expect(200);
      expect((await t.get(`${base}/Product/${s.binned}`).expect(200)).body.categoriesIds).toEqual([s.category]);
      expect((await t.get(`${base}/Category/${s.category}`).expect(200)).body.productsIds.sort()).toEqual([s.binned, s.live].sort());
    });

    it('takes a list sent as read (without the record in the bin) as no change, on every route', async () => {
      const s = await setUp(`${g} unchanged`);
      const before = await t.get(`${base}/Category/${s.category}`).expect(200);
      expect(before.body.productsIds).toEqual([]);
      const [item] = (await t.post(upsertPath, [{ entity: 'Category', payload: { id: s.category, productsIds: [] } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'NotModified', entity: { productsIds: [] } });
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Category', ids: [s.category], removeLinks: { products: [s.binned] } }).expect(200);
      await t.patch(`${base}/Category/${s.category}`, { productsIds: [] }).expect(200);
      const after = await t.get(`${base}/Category/${s.category}`).expect(200);
      expect(after.headers.etag).toBe(before.headers.etag);
      await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [s.binned] }).expect(200);
      expect((await t.get(`${base}/Product/${s.binned}`).expect(200)).body.categoriesIds).toEqual([s.category]);
    });
  });
});
