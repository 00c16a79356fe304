import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';

const statuses = (body: { status: string }[]) => body.map((r) => r.status);

describe.each(TEST_DBS)('upsert of items with link objects on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const path = `${base}/upsert`;

    it('finds the record by a unique index that holds the linked record (idempotent)', async () => {
      const item = { entity: 'Product', payload: { name: 'o2', brand: { name: `BN-${gen}` }, mpn: 'M1' } };
      const first = await t.post(path, [item]).expect(200);
      expect(first.body[0]).toMatchObject({ status: 'Created', entity: { mpn: 'M1' } });
      const { id, brandId } = first.body[0].entity;
      for (let i = 0; i < 2; i++) {
        const again = await t.post(path, [item]).expect(200);
        expect(again.body[0]).toMatchObject({ status: 'NotModified', entity: { id, brandId } });
      }
      const renamed = await t.post(path, [{ entity: 'Product', payload: { ...item.payload, name: 'o3' } }]).expect(200);
      expect(renamed.body[0]).toMatchObject({ status: 'Updated', entity: { id, name: 'o3' } });
      const products = (await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=brandId&where[0][value]=${brandId}`).expect(200)).body;
      expect(products.total).toBe(1);
    });

    it('treats two items of one batch naming the same key as one record', async () => {
      const payload = { name: 'twice', brand: { name: `Batch-${gen}` }, mpn: 'M2' };
      const res = await t.post(path, [
        { entity: 'Product', payload },
        { entity: 'Product', payload: { ...payload, name: 'twice, renamed' } },
        { entity: 'Product', payload: { name: 'other mpn', brand: { name: `Batch-${gen}` }, mpn: 'M3' } },
      ]).expect(200);
      expect(statuses(res.body)).toEqual(['Created', 'Updated', 'Created']);
      expect(res.body[1].entity.id).toBe(res.body[0].entity.id);
      expect(res.body[2].entity.id).not.toBe(res.body[0].entity.id);
      expect(res.body[2].entity.brandId).toBe(res.body[0].entity.brandId);
    });

    it('finds the record of an existing linked record, and creates one for a new linked record', async () => {
      const brandId = (await t.post(`${base}/Brand`, { name: `Known-${gen}` }).expect(200)).body.id;
      const stored = (await t.post(`${base}/Product`, { name: 'by id', brandId, mpn: 'M4' }).expect(200)).body;
      const res = await t.post(path, [
        { entity: 'Product', payload: { name: 'by object', brand: { name: `Known-${gen}` }, mpn: 'M4' } },
        { entity: 'Product', payload: { name: 'new brand', brand: { name: `Unknown-${gen}` }, mpn: 'M4' } },
      ]).expect(200);
      expect(statuses(res.body)).toEqual(['Updated', 'Created']);
      expect(res.body[0].entity).toMatchObject({ id: stored.id, name: 'by object', brandId });
      expect(res.body[1].entity.id).not.toBe(stored.id);
      const brands = (await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=Unknown-${gen}`).expect(200)).body;
      expect(brands.total).toBe(1);
    });

    it('stores nothing for an item that fails after its lookup', async () => {
      const res = await t.post(path, [{ entity: 'Product', payload: { brand: { name: `Orphan-${gen}` }, mpn: 'M5' } }]).expect(200);
      expect(res.body[0]).toMatchObject({ status: 'Failed', stored: false });
      const brands = (await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=Orphan-${gen}`).expect(200)).body;
      expect(brands.total).toBe(0);
    });

    it('never looks a record up by a unique index that a link object completes with a field the caller may not read, as with the id', async () => {
      const all = { create: true, read: 'all', edit: 'all', delete: 'no' };
      const user = await userWithRole(t, { scopes: { Product: all, Brand: all }, fields: { Product: { mpn: { read: false, edit: false } } } });
      const brandId = (await t.post(`${base}/Brand`, { name: `Hidden-mpn-${gen}` }).expect(200)).body.id;
      await t.post(`${base}/Product`, { name: 'stored', brandId, mpn: 'SECRET' }).expect(200);
      const byId = { entity: 'Product', payload: { name: 'guess', brandId, mpn: 'SECRET' } };
      const byObject = { entity: 'Product', payload: { name: 'guess', brand: { name: `Hidden-mpn-${gen}` }, mpn: 'SECRET' } };
      const res = await user.post(path, [byId, byObject]).expect(200);
      const refused = { status: 'Failed', stored: false, message: 'Not allowed to look up Product by mpn' };
      expect(res.body).toEqual([refused, refused]);
    });
  });
});
