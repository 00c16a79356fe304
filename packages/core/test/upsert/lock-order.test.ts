import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { UPSERT_PATHS } from './support';

jest.setTimeout(120_000);

/**
 * Two upserts of the same records in opposite orders lock those rows in opposite orders: on
 * PostgreSQL such transactions deadlock, and the database ends one of them. No client may see
 * that: every item of both is stored (CONTRACT §6, §17).
 */
describe.each(TEST_DBS)('overlapping upserts in opposite orders on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, poolSize: 10 });
  });
  afterAll(() => t.close());

  it.each(UPSERT_PATHS)('stores every item of both, round after round (generation %s)', async (g, path) => {
    const count = 300;
    const skus = Array.from({ length: count }, (_, i) => `lock-${g}-${String(i).padStart(4, '0')}`);
    await t.post(path, skus.map((sku) => ({ entity: 'Product', payload: { sku, name: 'start' } }))).expect(200);
    for (let round = 0; round < 6; round++) {
      const batch = (order: string[], tag: string) => order.map((sku) => ({ entity: 'Product', payload: { sku, name: `${tag} ${round}`, quantity: round } }));
      const answers = await Promise.all([
        t.post(path, batch(skus, 'up')),
        t.post(path, batch([...skus].reverse(), 'down')),
        t.post(path, batch(skus.filter((_, i) => i % 2), 'odd')),
        t.post(path, batch([...skus].reverse().filter((_, i) => i % 3), 'third')),
      ]);
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.body.filter((r: { status: string }) => r.status === 'Failed')).toEqual([]);
      }
    }
    const stored = await t.get(`/api/Product?where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=lock-${g}-&select=quantity&maxSize=1000`).expect(200);
    expect(stored.body.total).toBe(count);
    expect(stored.body.list.every((p: { quantity: number }) => p.quantity === 5)).toBe(true);
  });

  it.each(UPSERT_PATHS)('creates each new key once when both create the same new records (generation %s)', async (g, path) => {
    for (let round = 0; round < 4; round++) {
      const skus = Array.from({ length: 200 }, (_, i) => `new-${g}-${round}-${String(i).padStart(4, '0')}`);
      const batch = (order: string[], tag: string) => order.map((sku) => ({ entity: 'Product', payload: { sku, name: tag } }));
      const answers = await Promise.all([t.post(path, batch(skus, 'up')), t.post(path, batch([...skus].reverse(), 'down'))]);
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.body.filter((r: { status: string }) => r.status === 'Failed')).toEqual([]);
      }
      const created = answers.flatMap((res) => res.body.filter((r: { status: string }) => r.status === 'Created'));
      expect(created).toHaveLength(200);
      const stored = await t.get(`/api/Product?where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=new-${g}-${round}-&totalOnly=true`).expect(200);
      expect(stored.body.total).toBe(200);
    }
  });
});
