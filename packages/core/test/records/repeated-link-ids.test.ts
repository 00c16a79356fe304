import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/**
 * A multiple link is a set of ids (CONTRACT §16: the change log holds multiple links as id sets).
 * A body that names one id twice (`categoriesIds: [a, a, b]`) links each once, and its change
 * shows each once, on every route: the set-based upsert path did so, while a create, an update
 * and the single-record upsert path (an item with a link object) logged the list as sent.
 */
describe.each(TEST_DBS)('a multiple link written with a repeated id on %s', (kind) => {
  let t: TestApi;
  let shoes: string;
  let hats: string;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    shoes = (await t.post('/api/Category', { name: 'Shoes', code: 'rep-shoes' }).expect(200)).body.id;
    hats = (await t.post('/api/Category', { name: 'Hats', code: 'rep-hats' }).expect(200)).body.id;
    await t.post('/api/Brand', { name: 'Rep brand' }).expect(200);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const lastChange = async (id: string) => (await t.get(`${base}/entityStream?entityName=Product&id=${id}&maxSize=1`).expect(200)).body.list[0];
    const upsertPath = gen === 'A' ? `${base}/upsert` : `${base}/MassActions/action/upsert`;
    const update = (id: string, body: Record<string, unknown>) => (gen === 'A' ? t.patch(`${base}/Product/${id}`, body) : t.put(`${base}/Product/${id}`, body));

    it('links and logs each id once, on create, update and both upsert paths', async () => {
      const twice = [shoes, shoes, hats];
      const created = [(await t.post(`${base}/Product`, { name: 'By POST', categoriesIds: twice }).expect(200)).body.id as string];
      const items = [
        { entity: 'Product', payload: { name: 'Set-based', sku: `rep-set-${gen}`, categoriesIds: twice } },
        { entity: 'Product', payload: { name: 'Single', sku: `rep-single-${gen}`, categoriesIds: twice, brand: { name: 'Rep brand' } } },
      ];
      const results = (await t.post(upsertPath, items).expect(200)).body as { status: string; entity: { id: string } }[];
      expect(results.map((r) => r.status)).toEqual(['Created', 'Created']);
      created.push(...results.map((r) => r.entity.id));
      for (const id of created) {
        expect((await t.get(`${base}/Product/${id}`).expect(200)).body.categoriesIds).toEqual([shoes, hats]);
        expect((await lastChange(id)).diff.categoriesIds).toEqual({ was: [], became: [shoes, hats] });
      }

      const again = [hats, hats];
      await update(created[0], { categoriesIds: again }).expect(200);
      const updated = (await t.post(upsertPath, items.map((item) => ({ ...item, payload: { ...item.payload, categoriesIds: again } }))).expect(200)).body as { status: string }[];
      expect(updated.map((r) => r.status)).toEqual(['Updated', 'Updated']);
      for (const id of created) {
        expect((await t.get(`${base}/Product/${id}`).expect(200)).body.categoriesIds).toEqual([hats]);
        expect((await lastChange(id)).diff).toEqual({ categoriesIds: { was: [shoes, hats], became: [hats] } });
      }
    });
  });
});
