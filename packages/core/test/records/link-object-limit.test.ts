import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/**
 * A record's body carries at most 1,000 link objects (docs/guide/production.md, limits): each is
 * found or created in the write's one transaction, and on SQLite that transaction holds every
 * other request (CONTRACT §17). Past the limit every write route refuses the body as a whole
 * (400, nothing stored); at the limit it is written.
 */
describe.each(TEST_DBS)('the link objects of one record on %s', (kind) => {
  let t: TestApi;
  let brand: string;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    brand = (await t.post('/api/Brand', { name: 'Limit brand' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  const categories = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => ({ name: `${prefix} ${i}`, code: `${prefix}-${i}` }));
  const countOf = async (entity: string) => (await t.get(`/api/${entity}?totalOnly=true`).expect(200)).body.total as number;
  const refusal = {
    code: 'CORE_VALIDATION_FAILED',
    message: "categories: a record's body takes at most 1000 link objects",
    details: { issues: [{ path: ['categories'], code: 'invalid_link_object', message: "a record's body takes at most 1000 link objects" }] },
  };

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const update = (id: string, body: Record<string, unknown>) => (gen === 'A' ? t.patch(`${base}/Product/${id}`, body) : t.put(`${base}/Product/${id}`, body));
    const upsertPath = gen === 'A' ? `${base}/upsert` : `${base}/MassActions/action/upsert`;

    it('refuses more than 1,000 on create, update, upsert and mass update, and stores nothing', async () => {
      const stored = (await t.post(`${base}/Product`, { name: `Kept ${gen}` }).expect(200)).body.id as string;
      const before = { products: await countOf('Product'), categories: await countOf('Category') };
      // 1,001 objects, between ids of a record that exists: only objects count.
      const tooMany = [...categories(`over-${gen}`, 600), brand, ...categories(`over2-${gen}`, 401)];
      const created = await t.post(`${base}/Product`, { name: `Over ${gen}`, categories: tooMany }).expect(400);
      expect(created.body.error).toEqual(refusal);
      expect((await update(stored, { categories: tooMany }).expect(400)).body.error).toEqual(refusal);
      const items = (await t.post(upsertPath, [{ entity: 'Product', payload: { name: `Upsert ${gen}`, sku: `over-${gen}`, categories: tooMany } }]).expect(200)).body;
      expect(items).toEqual([expect.objectContaining({ status: 'Failed', stored: false, message: refusal.message })]);
      const mass = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [stored], values: { categories: tooMany } }).expect(400);
      const inValues = { ...refusal.details.issues[0], path: ['values', 'categories'] };
      expect(mass.body.error).toEqual({ ...refusal, details: { issues: [inValues] } });
      expect({ products: await countOf('Product'), categories: await countOf('Category') }).toEqual(before);
      expect((await t.get(`${base}/Product/${stored}`).expect(200)).body.categoriesIds).toEqual([]);
    });

    it('counts the objects of every link of the body together, and writes 1,000', async () => {
      const both = { name: `Both ${gen}`, brand: { name: `Both brand ${gen}` }, categories: categories(`both-${gen}`, 1000) };
      expect((await t.post(`${base}/Product`, both).expect(400)).body.error.message).toBe(refusal.message);
      const limit = (await t.post(`${base}/Product`, { name: `At the limit ${gen}`, categories: categories(`limit-${gen}`, 1000) }).expect(200)).body;
      expect(limit.categoriesIds).toHaveLength(1000);
    });
  });
});
