import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('concurrent upserts on %s', (kind) => {
  let t: TestApi;
  let brandId = '';
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, poolSize: 20 });
    brandId = (await t.post('/api/Brand', { name: 'Race brand' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  it.each([
    ['a unique field', (i: number) => ({ sku: 'RACE-1', name: `racer ${i}` })],
    ['a unique index', (i: number) => ({ mpn: 'RACE-MPN', brandId, name: `racer ${i}` })],
    ['a client id', (i: number) => ({ id: 'race-id', name: `racer ${i}` })],
    ['a unique field, with a link object', (i: number) => ({ sku: 'RACE-2', brand: { name: 'Race brand' }, name: `racer ${i}` })],
    ['a unique field, with a link object to a new record', (i: number) => ({ sku: 'RACE-3', brand: { name: 'New race brand' }, name: `racer ${i}` })],
    ['a unique index holding a link object', (i: number) => ({ mpn: 'RACE-MPN-2', brand: { name: 'Race brand' }, name: `racer ${i}` })],
    ['a client id, with a link object', (i: number) => ({ id: 'race-id-2', brand: { name: 'Race brand' }, name: `racer ${i}` })],
  ])('20 concurrent upserts of one new key (%s) store one record', async (_what, payload) => {
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => t.post('/api/upsert', [{ entity: 'Product', payload: payload(i) }])));
    for (const r of responses) expect(r.status).toBe(200);
    const statuses = responses.map((r) => r.body[0].status);
    expect(responses.map((r) => r.body[0]).filter((r) => r.status === 'Failed')).toEqual([]);
    expect(statuses.filter((s) => s === 'Created')).toHaveLength(1);
    const ids = new Set(responses.map((r) => r.body[0].entity.id));
    expect(ids.size).toBe(1);
  });

  it('counts one record per key after the races', async () => {
    const list = (await t.get('/api/Product?select=sku,mpn&maxSize=100').expect(200)).body;
    expect(list.list.filter((p: { sku: string }) => p.sku === 'RACE-1')).toHaveLength(1);
    expect(list.list.filter((p: { id: string }) => p.id === 'race-id')).toHaveLength(1);
    expect(list.list.filter((p: { sku: string }) => p.sku === 'RACE-3')).toHaveLength(1);
    const brands = (await t.get('/api/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=New race brand').expect(200)).body;
    expect(brands.total).toBe(1);
  });
});

describe.each(TEST_DBS)('concurrent upsert batches whose new keys overlap, on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  /** 600 of 1,000 keys in an order of their own for each batch `k` (a seeded shuffle). */
  const keysOf = (k: number) => {
    const keys = Array.from({ length: 1000 }, (_, i) => i);
    let seed = k + 1;
    for (let i = keys.length - 1; i > 0; i--) {
      seed = (seed * 16807) % 2147483647;
      const j = seed % (i + 1);
      [keys[i], keys[j]] = [keys[j], keys[i]];
    }
    return keys.slice(0, 600);
  };

  it('store every item, each key once, however often the batches collide', async () => {
    for (let round = 0; round < 3; round++) {
      const prefix = `OVERLAP-${round}`;
      // Both generations' routes, side by side.
      const path = (k: number) => (k % 2 ? '/api/v1/MassActions/action/upsert' : '/api/upsert');
      const responses = await Promise.all(Array.from({ length: 8 }, (_, k) => t.post(path(k), keysOf(k).map((i) => ({ entity: 'Product', payload: { sku: `${prefix}-${i}`, name: 'n', price: k } })))));
      for (const r of responses) expect(r.status).toBe(200);
      const results = responses.flatMap((r) => r.body as { status: string; message?: string; entity?: { sku: string } }[]);
      expect(results.filter((r) => r.status === 'Failed')).toEqual([]);
      const created = results.filter((r) => r.status === 'Created').map((r) => r.entity?.sku);
      const stored = (await t.get(`/api/Product?where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=${prefix}-&totalOnly=true`).expect(200)).body;
      expect(new Set(created).size).toBe(created.length);
      expect(stored.total).toBe(created.length);
      expect(stored.total).toBe(new Set(Array.from({ length: 8 }, (_, k) => keysOf(k)).flat()).size);
    }
  });
});
