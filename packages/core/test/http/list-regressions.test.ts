import { recordQueries, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('list regressions on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    const zeta = (await t.post('/api/Brand', { name: 'Zeta' }).expect(200)).body.id;
    const alpha = (await t.post('/api/Brand', { name: 'Alpha' }).expect(200)).body.id;
    await t.post('/api/Product', { name: 'p1', brandId: zeta, quantity: 2 }).expect(200);
    await t.post('/api/Product', { name: 'p2', brandId: alpha }).expect(200);
    await t.post('/api/Product', { name: 'p3', quantity: 1 }).expect(200);
  });
  afterAll(() => t.close());

  it('sorts by a link that is not selected, without returning it', async () => {
    for (const sortBy of ['brand', 'brandName']) {
      const res = await t.get(`/api/Product?select=name&sortBy=${sortBy}`).expect(200);
      expect(res.body.list.map((r: { name: string }) => r.name)).toEqual(['p3', 'p2', 'p1']);
      expect(Object.keys(res.body.list[0]).sort()).toEqual(['id', 'name']);
    }
  });

  it('sorts NULL as the smallest value on both databases', async () => {
    const asc = await t.get('/api/Product?sortBy=quantity&select=name').expect(200);
    expect(asc.body.list.map((r: { name: string }) => r.name)).toEqual(['p2', 'p3', 'p1']);
    const desc = await t.get('/api/Product?sortBy=quantity&asc=false&select=name').expect(200);
    expect(desc.body.list.map((r: { name: string }) => r.name)).toEqual(['p1', 'p3', 'p2']);
  });

  it('pages by id with a plain ORDER BY that the primary key index serves', async () => {
    const sql = await recordQueries(t, () => t.get('/api/Product?maxSize=2').expect(200));
    const page = sql.find((s) => /order by/i.test(s)) ?? '';
    expect(page).toMatch(/order by ["`]product["`]\.["`]id["`] asc limit/i);
    expect(page).not.toMatch(/nulls/i);
  });

  it('accepts Name / Names only after link names', async () => {
    for (const bad of ['skuName', 'nameName', 'brandNames', 'categoriesName']) {
      await t.get(`/api/Product?select=${bad}`).expect(400);
      await t.get(`/api/Product?sortBy=${bad}`).expect(400);
    }
    await t.get('/api/Product?select=brandName,categoriesNames').expect(200);
  });
});
