import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { streamOf } from '../../../../test/support/link-targets';
import { attributeEntities, createAttribute } from '../attributes/support';

/**
 * Writes that lock the same rows in opposite orders: on PostgreSQL the database ends one of them
 * to break the deadlock, and the update is judged again on what is stored then (never a 500).
 */
describe.each(TEST_DBS)('updates that deadlock on %s', (kind) => {
  let t: TestApi;
  let attrs: string[];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: attributeEntities, poolSize: 20 });
    attrs = [await createAttribute(t, { code: 'deadText', type: 'varchar' }), await createAttribute(t, { code: 'deadInt', type: 'int' })];
  });
  afterAll(() => t.close());

  let serial = 0;
  const create = async (entity: string, body: Record<string, unknown>) => (await t.post(`/api/${entity}`, body).expect(200)).body.id as string;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('links and unlinks one pair of records from both sides at once: every request answers true, one Relate and one Unrelate per side', async () => {
      for (let round = 0; round < 4; round++) {
        const product = await create('Product', { name: 'Both sides' });
        const category = await create('Category', { name: 'Both sides', code: `both-${base}-${(serial += 1)}` });
        const fromProduct = `${base}/Product/${product}/categories`;
        const fromCategory = `${base}/Category/${category}/products`;
        const linked = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? t.post(fromProduct, { id: category }) : t.post(fromCategory, { id: product }))));
        expect(linked.map((r) => [r.status, r.body])).toEqual(linked.map(() => [200, true]));
        expect((await t.get(`/api/Product/${product}`).expect(200)).body.categoriesIds).toEqual([category]);
        const unlinked = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? t.del(`${fromProduct}?id=${category}`) : t.del(`${fromCategory}?id=${product}`))));
        expect(unlinked.map((r) => [r.status, r.body])).toEqual(unlinked.map(() => [200, true]));
        expect((await t.get(`/api/Product/${product}`).expect(200)).body.categoriesIds).toEqual([]);
        for (const [entity, id] of [['Product', product], ['Category', category]]) {
          expect((await streamOf(t, entity, id)).map((c) => c.action)).toEqual(['Unrelate', 'Relate', 'Create']);
        }
      }
    });

    it('sets the values of two attributes of one record in opposite orders at once: every request answers true, the record keeps one value of each', async () => {
      for (let round = 0; round < 4; round++) {
        const product = await create('Product', { name: 'Attributes' });
        const values = (i: number) => [
          { attributeId: attrs[0], value: `v${i}` },
          { attributeId: attrs[1], value: i },
        ];
        const answers = await Promise.all(
          Array.from({ length: 12 }, (_, i) => t.post(`${base}/Product/${product}/upsertAttributeValues`, i % 2 ? values(i) : values(i).reverse())),
        );
        expect(answers.map((r) => [r.status, r.body])).toEqual(answers.map(() => [200, true]));
        const stored = (await t.get(`${base}/Product/${product}/attributeValues`).expect(200)).body as { attributeId: string }[];
        expect(stored.map((v) => v.attributeId).sort()).toEqual([...attrs].sort());
        const updates = (await streamOf(t, 'Product', product)).filter((c) => c.action === 'Update');
        expect(updates).toHaveLength(12);
      }
    });
  });
});
