import { countQueries, recordQueries, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { UPSERT_PATHS, type UpsertResult } from './support';

const statuses = (body: UpsertResult[]) => body.map((r) => r.status);

describe.each(TEST_DBS)('upsert results on %s', (kind) => {
  let t: TestApi;
  let categories: string[];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, auth: { tokenCacheSeconds: 3600 } });
    categories = [];
    for (const code of ['r1', 'r2']) categories.push((await t.post('/api/Category', { name: code, code }).expect(200)).body.id);
  });
  afterAll(() => t.close());

  describe.each(UPSERT_PATHS)('generation %s: %s', (gen, path) => {
    it('gives every stored result the stored fields of its record, multiple-link ids included, and nothing else', async () => {
      const brand = (await t.post('/api/Brand', { name: `Res-${gen}` }).expect(200)).body;
      const stored = (await t.post('/api/Product', { name: 'Stored', sku: `RS-${gen}`, brandId: brand.id, categoriesIds: categories }).expect(200)).body;
      const res = await t
        .post(path, [
          { entity: 'Product', payload: { sku: `RS-${gen}`, price: 5 } },
          { entity: 'Product', payload: { sku: `RS-${gen}`, price: 5 } },
          { entity: 'Product', payload: { name: 'New', sku: `RN-${gen}`, categoriesIds: [categories[0]] } },
          { entity: 'Brand', payload: { name: `Res-${gen}`, code: 'x' } },
          { entity: 'Brand', payload: { name: `Res-new-${gen}` } },
        ])
        .set({ 'With-Meta': 'true', 'Flatten-Attributes': 'true' })
        .expect(200);
      const body = res.body as UpsertResult[];
      expect(statuses(body)).toEqual(['Updated', 'NotModified', 'Created', 'Updated', 'Created']);
      const keys = (r: UpsertResult) => Object.keys(r.entity ?? {}).sort();
      const productKeys = keys(body[2]);
      expect(productKeys).toContain('categoriesIds');
      expect(productKeys).not.toContain('categoriesNames');
      expect(productKeys).not.toContain('brandName');
      expect(productKeys).not.toContain('_meta');
      expect(productKeys).not.toContain('attributesDefs');
      expect(keys(body[0])).toEqual(productKeys);
      expect(keys(body[1])).toEqual(productKeys);
      expect(keys(body[3])).toEqual(keys(body[4]));
      expect(keys(body[3])).toContain('productsIds');
      expect(body[0].entity).toMatchObject({ id: stored.id, price: 5, brandId: brand.id });
      expect(new Set(body[0].entity?.categoriesIds as string[])).toEqual(new Set(categories));
      expect(new Set(body[1].entity?.categoriesIds as string[])).toEqual(new Set(categories));
      expect(body[3].entity?.productsIds).toEqual([stored.id]);
      expect(body[4].entity?.productsIds).toEqual([]);
    });

    it('stores and logs every type of value, whether all items of a batch share it (bound once) or each has its own', async () => {
      const shared = { price: 2.5, quantity: 7, isActive: false, releaseDate: '2026-03-01', availableAt: '2026-03-01 10:20:30', color: 'green', labels: ['sale', 'eco'], specs: { size: 'L', tags: ['a'] }, description: 'Same text' };
      const own = (k: number) => ({ price: k + 0.75, quantity: k, isActive: k % 2 === 0, releaseDate: `2026-04-0${k + 1}`, availableAt: `2026-04-0${k + 1} 0${k}:00:00`, color: ['red', 'blue', 'green'][k], labels: [['new'], [], ['eco', 'new']][k], specs: [{ k }, {}, { n: null }][k], description: ['one', null, 'three'][k] });
      const items = (sku: string, values: (k: number) => Record<string, unknown>) => [0, 1, 2].map((k) => ({ entity: 'Product', payload: { name: `Typed ${k}`, sku: `${sku}-${gen}-${k}`, ...values(k) } }));
      for (const [sku, values] of [['TS', () => shared], ['TO', own]] as const) {
        const body = (await t.post(path, items(sku, values)).expect(200)).body as UpsertResult[];
        expect(statuses(body)).toEqual(['Created', 'Created', 'Created']);
        for (const [k, result] of body.entries()) {
          const expected = values(k);
          expect(result.entity).toMatchObject(expected);
          expect((await t.get(`/api/Product/${result.entity?.id as string}`).expect(200)).body).toMatchObject(expected);
          const [change] = (await t.get(`/api/v1/Product/${result.entity?.id as string}/stream?maxSize=5`).expect(200)).body.list;
          expect(change.diff).toEqual(Object.fromEntries(Object.entries({ name: `Typed ${k}`, sku: `${sku}-${gen}-${k}`, ...expected }).map(([key, became]) => [key, { was: null, became }])));
        }
      }
    });

    it('logs a batch of new records with the diffs, field order and seq order of one logged by the process, also when PostgreSQL logs them with the insert', async () => {
      const values = (k: number) => ({ name: `Log ${k}`, sku: `LB-${gen}-${k}`, price: k + 0.1 + 0.2, quantity: k, releaseDate: '2026-05-0' + (k + 1), color: 'blue', description: `it's "${k}" \\ ü` });
      // Each item alike, so PostgreSQL logs them with their insert; then the same with one item lacking a field (logged by the process).
      const alike = [0, 1, 2].map((k) => ({ entity: 'Product', payload: values(k) }));
      const unlike = [3, 4, 5].map((k) => ({ entity: 'Product', payload: k === 4 ? { ...values(k), description: undefined } : values(k) }));
      for (const items of [alike, unlike]) {
        let body: UpsertResult[] = [];
        const sql = await recordQueries(t, async () => void (body = (await t.post(path, items).expect(200)).body));
        expect(statuses(body)).toEqual(['Created', 'Created', 'Created']);
        const byInsert = sql.some((q) => /^with p as \(insert into "product"/.test(q));
        expect(byInsert).toBe(kind === 'postgres' && items === alike);
        expect(sql.some((q) => /^insert into "record_change"/.test(q))).toBe(!byInsert);
        const seqs: number[] = [];
        for (const [i, result] of body.entries()) {
          const payload = items[i].payload as Record<string, unknown>;
          const [change] = (await t.get(`/api/v1/Product/${result.entity?.id as string}/stream?maxSize=5`).expect(200)).body.list;
          const sent = Object.keys(values(0)).filter((key) => payload[key] !== undefined);
          // The fields sent, in the order of the definition, then the defaults.
          const order = ['name', 'sku', 'description', 'price', 'quantity', 'isActive', 'releaseDate', 'color'].filter((key) => sent.includes(key) || key === 'isActive');
          expect(Object.keys(change.diff)).toEqual(order.filter((key) => key !== 'isActive').concat('isActive'));
          expect(change.diff).toEqual(Object.fromEntries(order.map((key) => [key, { was: null, became: key === 'isActive' ? true : payload[key] }])));
          expect(change).toMatchObject({ action: 'Create', userId: expect.any(String) });
          seqs.push(Number(change.id));
        }
        expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      }
    });

    it('tells Updated from NotModified within one second on the single-record path (link objects, entities with hooks)', async () => {
      const withObject = (price: number) => ({ entity: 'Product', payload: { name: 'Obj', sku: `RO-${gen}`, price, brand: { name: `RO-brand-${gen}` } } });
      expect(statuses((await t.post(path, [withObject(1)]).expect(200)).body)).toEqual(['Created']);
      expect(statuses((await t.post(path, [withObject(2)]).expect(200)).body)).toEqual(['Updated']);
      expect(statuses((await t.post(path, [withObject(2)]).expect(200)).body)).toEqual(['NotModified']);
      const user = (name: string) => ({ entity: 'User', payload: { userName: `ru-${gen}`, name } });
      expect(statuses((await t.post(path, [user('One')]).expect(200)).body)).toEqual(['Created']);
      expect(statuses((await t.post(path, [user('Two')]).expect(200)).body)).toEqual(['Updated']);
      expect(statuses((await t.post(path, [user('Two')]).expect(200)).body)).toEqual(['NotModified']);
    });
  });

  it('costs the same number of queries for 5 and 50 stored records, whatever fields the items set', async () => {
    const items = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ entity: 'Product', payload: { name: `Q${i}`, sku: `RQ-${tag}-${i}`, categoriesIds: [categories[i % 2]] } }));
    for (const [n, tag] of [[5, 'small'], [50, 'large']] as const) await t.post('/api/upsert', items(n, tag)).expect(200);
    // A batch that finds stored records: the next ones look their keys up first (none is guessed new).
    await t.post('/api/upsert', items(1, 'small')).expect(200);
    const count = async (n: number, tag: string) => {
      const body = items(n, tag).map((item, i) => ({ entity: 'Product', payload: { sku: item.payload.sku, price: i } }));
      await t.get('/api/Product?maxSize=1').expect(200); // warm the token and role caches
      return countQueries(t, async () => {
        const res = await t.post('/api/upsert', body).expect(200);
        expect(new Set(statuses(res.body))).toEqual(new Set(['Updated']));
        for (const r of res.body as UpsertResult[]) expect((r.entity?.categoriesIds as string[]).length).toBe(1);
      });
    };
    expect(await count(50, 'large')).toBe(await count(5, 'small'));
  });
});
