import { GENERATIONS } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, FLAT, startAttributeApi, unique } from '../attributes/support';
import type { TestApi } from '../../../../test/support/api';

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/** An `int` holds the 32-bit range on both databases: the field, an int attribute and a filter value. */
describe.each(TEST_DBS)('int range on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    await createAttribute(t, { code: 'count32', type: 'int' });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('stores -2^31 and 2^31 - 1 and refuses one past either end, in a field, an attribute and a where value', async () => {
      for (const quantity of [INT_MIN, INT_MAX]) {
        const made = await t.post(`${base}/Product`, { name: unique('Int'), quantity }).expect(200);
        expect((await t.get(`${base}/Product/${made.body.id}`).expect(200)).body.quantity).toBe(quantity);
        const found = await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=quantity&where[0][value]=${quantity}&select=quantity`).expect(200);
        expect(found.body.list.map((r: { id: string }) => r.id)).toContain(made.body.id);
        await t.patch(`${base}/Product/${made.body.id}`, { count32: quantity }).set(FLAT).expect(200);
        expect((await t.get(`${base}/Product/${made.body.id}`).set(FLAT).expect(200)).body.count32).toBe(quantity);
      }
      const id = (await t.post(`${base}/Product`, { name: unique('Int') }).expect(200)).body.id;
      for (const quantity of [INT_MIN - 1, INT_MAX + 1]) {
        await t.post(`${base}/Product`, { name: unique('Int'), quantity }).expect(400);
        await t.patch(`${base}/Product/${id}`, { quantity }).expect(400);
        await t.patch(`${base}/Product/${id}`, { count32: quantity }).set(FLAT).expect(400);
        await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=quantity&where[0][value]=${quantity}`).expect(400);
      }
      const stored = (await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body;
      expect([stored.quantity, stored.count32 ?? null]).toEqual([null, null]);
    });
  });
});
