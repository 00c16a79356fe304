import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('links, delete and restore on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const uniq = (s: string) => `${s} ${gen}`;

    it('writes and reads single links, many-to-many and has-many from both sides', async () => {
      const brand = (await t.post(`${base}/Brand`, { name: uniq('Linked brand') }).expect(200)).body;
      const c1 = (await t.post(`${base}/Category`, { name: 'Shoes', code: uniq('shoes') }).expect(200)).body;
      const c2 = (await t.post(`${base}/Category`, { name: 'Boots', code: uniq('boots'), parentId: c1.id }).expect(200)).body;
      expect(c2).toMatchObject({ parentId: c1.id, parentName: 'Shoes' });
      const p = (await t.post(`${base}/Product`, { name: 'Linked', brandId: brand.id, categoriesIds: [c1.id, c2.id] }).expect(200)).body;
      expect(p).toMatchObject({ brandId: brand.id, brandName: uniq('Linked brand') });
      expect(new Set(p.categoriesIds)).toEqual(new Set([c1.id, c2.id]));
      expect(p.categoriesNames).toEqual({ [c1.id]: 'Shoes', [c2.id]: 'Boots' });

      const brandRead = (await t.get(`${base}/Brand/${brand.id}`).expect(200)).body;
      expect(brandRead.productsIds).toEqual([p.id]);
      const catRead = (await t.get(`${base}/Category/${c1.id}`).expect(200)).body;
      expect(catRead.productsIds).toEqual([p.id]);

      const moved = (await t.patch(`${base}/Product/${p.id}`, { categoriesIds: [c2.id], brandId: null }).expect(200)).body;
      expect(moved).toMatchObject({ categoriesIds: [c2.id], brandId: null, brandName: null });
      expect((await t.get(`${base}/Brand/${brand.id}`).expect(200)).body.productsIds).toEqual([]);

      const viaHasMany = (await t.patch(`${base}/Brand/${brand.id}`, { productsIds: [p.id] }).expect(200)).body;
      expect(viaHasMany.productsIds).toEqual([p.id]);
      expect((await t.get(`${base}/Product/${p.id}`).expect(200)).body.brandId).toBe(brand.id);
    });

    it('lists multiple links of every record in linked-id order, without deleted targets', async () => {
      const ids = ['zz', 'aa', 'mm'].map((s) => `cat-${s}-${gen}`);
      for (const id of ids) await t.post(`${base}/Category`, { id, name: `Cat ${id}`, code: id }).expect(200);
      const brand = (await t.post(`${base}/Brand`, { name: uniq('Ordered brand') }).expect(200)).body;
      const made = [];
      for (const categoriesIds of [ids, [ids[2], ids[0]], []]) {
        made.push((await t.post(`${base}/Product`, { name: uniq('Ordered'), brandId: brand.id, categoriesIds }).expect(200)).body.id);
      }
      await t.del(`${base}/Category/${ids[2]}`).expect(200);
      const page = (await t.get(`${base}/Product?select=categoriesNames&where[0][type]=equals&where[0][attribute]=name&where[0][value]=${uniq('Ordered')}`).expect(200)).body;
      expect(page.list.map((p: { id: string }) => p.id)).toEqual(made);
      expect(page.list.map((p: { categoriesIds: string[] }) => p.categoriesIds)).toEqual([[ids[1], ids[0]], [ids[0]], []]);
      expect(page.list[0].categoriesNames).toEqual({ [ids[1]]: `Cat ${ids[1]}`, [ids[0]]: `Cat ${ids[0]}` });
      expect(page.list[2].categoriesNames).toEqual({});
      const brands = (await t.get(`${base}/Brand?select=productsNames&where[0][type]=equals&where[0][attribute]=id&where[0][value]=${brand.id}`).expect(200)).body;
      expect(brands.list[0].productsIds).toEqual([...made].sort());
    });

    it('fails a write naming a link target that does not exist, and stores nothing', async () => {
      const before = (await t.get(`${base}/Product?totalOnly=true`)).body.total;
      const res = await t.post(`${base}/Product`, { name: 'Dangling', brandId: 'no-such-brand' }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', details: { entity: 'Brand', field: 'brandId' } });
      await t.post(`${base}/Product`, { name: 'Dangling', categoriesIds: ['no-such-category'] }).expect(400);
      expect((await t.get(`${base}/Product?totalOnly=true`)).body.total).toBe(before);
      const p = (await t.post(`${base}/Product`, { name: 'Keep' }).expect(200)).body;
      await t.patch(`${base}/Product/${p.id}`, { name: 'Changed', brandId: 'no-such-brand' }).expect(400);
      expect((await t.get(`${base}/Product/${p.id}`)).body.name).toBe('Keep');
    });

    it('soft-deletes, restores, and removes permanently with the permanently header', async () => {
      const brand = (await t.post(`${base}/Brand`, { name: uniq('Deletable') }).expect(200)).body;
      const p = (await t.post(`${base}/Product`, { name: 'Child', brandId: brand.id }).expect(200)).body;
      await t.del(`${base}/Brand/${brand.id}`).expect(200);
      await t.del(`${base}/Brand/${brand.id}`).expect(404);
      expect((await t.get(`${base}/Product/${p.id}`)).body.brandName).toBeNull();
      const list = (await t.get(`${base}/Brand?select=name`)).body.list.map((b: { id: string }) => b.id);
      expect(list).not.toContain(brand.id);

      const restored = await t.post(`${base}/entityRestore`, { entityName: 'Brand', ids: [brand.id, 'unknown-id'] }).expect(200);
      expect(restored.body.restored).toBe(1);
      expect(restored.body.errors).toEqual([expect.objectContaining({ id: 'unknown-id', code: 'CORE_NOT_FOUND' })]);
      expect((await t.get(`${base}/Product/${p.id}`)).body.brandName).toBe(uniq('Deletable'));

      await request(t.server).delete(`${base}/Brand/${brand.id}`).set('Authorization-Token', t.token).set('permanently', 'true').expect(200);
      expect(await t.api.database.knex('brand').where('id', brand.id).first()).toBeUndefined();
      expect((await t.get(`${base}/Product/${p.id}`)).body.brandId).toBeNull();
      const gone = await t.post(`${base}/entityRestore`, { entityName: 'Brand', ids: [brand.id] }).expect(200);
      expect(gone.body.restored).toBe(0);
      await t.post(`${base}/entityRestore`, { entityName: 'Nope', ids: [] }).expect(404);
      await t.post(`${base}/entityRestore`, { entityName: 'Brand', ids: 'x' }).expect(400);
    });
  });
});
