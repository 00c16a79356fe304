import { GENERATIONS } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { finishedJob, startWorld, withRole, type World } from './world';

/**
 * The rules of CONTRACT §15 that concern other writes than a record's fields: attribute values,
 * concurrent find-or-create, permanent deletes.
 */
jest.setTimeout(60_000);

const FLAT = { 'Flatten-Attributes': 'true' };

describe.each(TEST_DBS)('write rules on %s', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
  });
  afterAll(() => w.t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('refuses a link attribute to a record the caller may not read on every attribute route, alike', async () => {
      const u = await w.as(withRole({ scopes: { Brand: { read: 'own' } } }));
      const id = (await w.t.post(`${base}/Product`, { name: 'With maker' }).expect(200)).body.id;
      const before = (await w.t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body;
      const shape = new RegExp(`^Brand '${w.brand.id}' not found \\(.+\\)$`);
      const answers = [
        await u.patch(`${base}/Product/${id}`, { makerId: w.brand.id }).set(FLAT),
        await u.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: w.maker.id, value: w.brand.id }]),
        await u.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { makerId: w.brand.id } }).set(FLAT),
      ];
      for (const res of answers) {
        const error = res.body.error ?? res.body.errors?.[0];
        expect({ status: res.status, code: error?.code }).toEqual({ status: res.body.errors ? 200 : 400, code: 'CORE_INVALID_LINK' });
        expect(error.message).toMatch(shape);
      }
      const upsert = await u.post(`${base}/upsert`, [{ entity: 'Product', payload: { id, makerId: w.brand.id } }]).set(FLAT).expect(200);
      expect(upsert.body[0]).toMatchObject({ status: 'Failed', stored: false });
      expect(upsert.body[0].message).toMatch(shape);
      expect((await w.t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body).toEqual(before);
      // The same write with a brand the caller may read is stored.
      const own = (await u.post(`${base}/Brand`, { name: `Own brand ${gen}` }).expect(200)).body.id;
      await u.patch(`${base}/Product/${id}`, { makerId: own }).set(FLAT).expect(200);
      expect((await w.t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body.makerId).toBe(own);
    });

    it('answers a mass update of a field or link the role may not edit 403, as an update of one record, before any record', async () => {
      const u = await w.as(withRole({ fields: { Product: { price: { edit: false }, categories: { edit: false } } } }));
      const id = (await w.t.post(`${base}/Product`, { name: 'Mass target', price: 5 }).expect(200)).body.id;
      const before = (await w.t.get(`${base}/Product/${id}`).expect(200)).body;
      const patch = await u.patch(`${base}/Product/${id}`, { price: null }).expect(403);
      const direct = await u.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { price: null } }).expect(403);
      const asJob = await u.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: [{ type: 'equals', attribute: 'id', value: id }], values: { price: 7 } }).expect(403);
      const link = await u.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], addLinks: { categories: [w.category] } }).expect(403);
      for (const res of [direct, asJob]) expect(res.body.error).toEqual(patch.body.error);
      expect(link.body.error).toMatchObject({ code: 'CORE_FORBIDDEN', message: 'Not allowed to edit Product.categories' });
      expect((await w.t.get(`${base}/Product/${id}`).expect(200)).body).toEqual(before);
      // The fields it may edit still go through, record by record.
      expect((await u.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { quantity: 3 } }).expect(200)).body).toEqual({ updated: 1, errors: [] });
    });

    it('answers a mass update whose link object the role may not search with 403 before any record, as an update of one record', async () => {
      const blind = await w.as(withRole({ scopes: { Brand: { read: 'no', create: true } } }));
      const hidden = await w.as(withRole({ fields: { Brand: { name: { read: false } } } }));
      const id = (await w.t.post(`${base}/Product`, { name: 'Mass link object' }).expect(200)).body.id;
      const before = (await w.t.get(`${base}/Product/${id}`).expect(200)).body;
      for (const [u, message] of [[blind, 'Not allowed to read Brand'], [hidden, 'Not allowed to read Brand.name']] as const) {
        const values = { brand: { name: w.brand.name } };
        const patch = await u.patch(`${base}/Product/${id}`, values).expect(403);
        const direct = await u.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values }).expect(403);
        const asJob = await u.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: [{ type: 'equals', attribute: 'id', value: id }], values }).expect(403);
        expect(patch.body.error).toMatchObject({ code: 'CORE_FORBIDDEN', message });
        for (const res of [direct, asJob]) expect(res.body.error).toMatchObject({ code: 'CORE_FORBIDDEN', message });
      }
      expect((await w.t.get(`${base}/Product/${id}`).expect(200)).body).toEqual(before);
    });

    it('links concurrent find-or-creates of one new record to one record, all succeeding', async () => {
      const u = await w.as(withRole({ scopes: { ExtensibleEnumOption: { create: true } } }));
      const brand = `Parallel brand ${gen}`;
      const option = `Parallel ${gen}`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => u.post(`${base}/Product`, { name: `P${i}`, brand: { name: brand }, status: { name: option } })),
      );
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((r) => r.body.brandId)).size).toBe(1);
      expect(new Set(answers.map((r) => r.body.statusId)).size).toBe(1);
      const brands = (await w.t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=${encodeURIComponent(brand)}`).expect(200)).body;
      expect(brands.total).toBe(1);
      const options = (await w.t.get(`${base}/ExtensibleEnumOption?where[0][type]=equals&where[0][attribute]=name&where[0][value]=${encodeURIComponent(option)}`).expect(200)).body;
      expect(options.list.map((o: { code: string }) => o.code)).toEqual([`parallel_${gen.toLowerCase()}`]);
    });

    it('derives option codes unique within their list (_2, _3, …)', async () => {
      const list = (await w.t.post(`${base}/ExtensibleEnum`, { code: `colors_${gen}`, name: 'Colors' }).expect(200)).body.id;
      const codes = [];
      for (const name of ['Dark Blue', 'dark-blue', 'DARK  BLUE']) {
        codes.push((await w.t.post(`${base}/ExtensibleEnumOption`, { name, extensibleEnumId: list }).expect(200)).body.code);
      }
      expect(codes).toEqual(['dark_blue', 'dark_blue_2', 'dark_blue_3']);
      const job = (await w.t.post(`${base}/upsertAsync`, [{ entity: 'ExtensibleEnumOption', payload: { name: 'Dark blue', extensibleEnumId: list } }]).expect(200)).body;
      expect(((await finishedJob(w.t, { base, id: job.jobId })).result as { entity: { code: string } }[])[0].entity.code).toBe('dark_blue_4');
    });

    it('removes a record that is already soft-deleted when asked permanently, within the delete rights (to others it is not found)', async () => {
      const id = (await w.t.post(`${base}/Product`, { name: 'Twice deleted' }).expect(200)).body.id;
      await w.t.del(`${base}/Product/${id}`).expect(200);
      // Who may not remove it learns nothing of it: a soft-deleted record is not found, as one that never was.
      const owner = await w.as(withRole({ scopes: { Product: { delete: 'own' } } }));
      const hidden = await owner.del(`${base}/Product/${id}`).set('permanently', 'true').expect(404);
      const never = await owner.del(`${base}/Product/never-${id}`).set('permanently', 'true').expect(404);
      expect(hidden.body.error.message.replace(id, '?')).toBe(never.body.error.message.replace(`never-${id}`, '?'));
      expect(hidden.body.error.code).toBe(never.body.error.code);
      const blind = await w.as(withRole({ scopes: { Product: { read: 'own', delete: 'own' } } }));
      await blind.del(`${base}/Product/${id}`).set('permanently', 'true').expect(404);
      await w.t.del(`${base}/Product/${id}`).expect(404);
      expect((await w.t.del(`${base}/Product/${id}`).set('permanently', 'true').expect(200)).body).toBe(true);
      const restore = (await w.t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [id] }).expect(200)).body;
      expect(restore).toEqual({ restored: 0, errors: [{ id, code: 'CORE_NOT_FOUND', message: `Product '${id}' not found` }] });
      await w.t.del(`${base}/Product/${id}`).set('permanently', 'true').expect(404);
    });
  });
});
