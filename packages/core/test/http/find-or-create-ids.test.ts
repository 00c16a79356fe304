import { defineEntity, systemContext } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole, type UserClient } from '../../../../test/support/users';

const Item = defineEntity({
  name: 'Item',
  fields: {
    name: { type: 'varchar', required: true },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'item_status' },
    tags: { type: 'linkMultiple', entity: 'ExtensibleEnumOption', extensibleEnum: 'item_tags' },
  },
});

/**
 * A multiple link written as an array (`categories: [id, {…}]`) takes ids beside link objects. An
 * update judges those ids as it judges `categoriesIds` (CONTRACT §15): a missing record, one the
 * caller may not read and an option of another list are the 400 `CORE_INVALID_LINK` of any
 * link, on every route, and nothing is written.
 */
describe.each(TEST_DBS)('ids among the link objects of an update on %s', (kind) => {
  let t: TestApi;
  let user: UserClient;
  let draft: string;
  const count = async (entity: string) => (await t.get(`/api/${entity}?totalOnly=true`).expect(200)).body.total as number;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [...testEntities, Item] });
    const lists: Record<string, string> = {};
    for (const code of ['item_status', 'item_tags']) lists[code] = (await t.api.repository('ExtensibleEnum').create(systemContext(), { code, name: code })).id;
    draft = (await t.api.repository('ExtensibleEnumOption').create(systemContext(), { code: 'draft', name: 'Draft', extensibleEnumId: lists.item_status })).id;
    const all = { create: true, read: 'all', edit: 'all', delete: 'all' };
    user = await userWithRole(t, { scopes: { Product: all, Category: { create: true, read: 'own', edit: 'own', delete: 'no' } } });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('refuses a missing record among them on PATCH, PUT, upsert and mass update, keeping the stored list', async () => {
      const shoes = (await t.post(`${base}/Category`, { name: 'Shoes', code: `ids-shoes-${gen}` }).expect(200)).body;
      const product = (await t.post(`${base}/Product`, { name: 'P', categoriesIds: [shoes.id] }).expect(200)).body;
      const byIds = await t.patch(`${base}/Product/${product.id}`, { categoriesIds: ['missing'] }).expect(400);
      expect(byIds.body.error.code).toBe('CORE_INVALID_LINK');
      const categories = await count('Category');
      for (const send of [t.patch, t.put]) {
        const res = await send(`${base}/Product/${product.id}`, { categories: ['missing'] }).expect(400);
        expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message: byIds.body.error.message });
        await send(`${base}/Product/${product.id}`, { categories: [{ name: 'Hats', code: `ids-hats-${gen}` }, 'missing'] }).expect(400);
      }
      const upsertPath = gen === 'A' ? `${base}/upsert` : `${base}/MassActions/action/upsert`;
      const upserted = (await t.post(upsertPath, [{ entity: 'Product', payload: { id: product.id, categories: ['missing'] } }]).expect(200)).body;
      expect(upserted).toEqual([{ status: 'Failed', stored: false, message: byIds.body.error.message }]);
      const mass = (await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [product.id], values: { categories: ['missing'] } }).expect(200)).body;
      expect(mass).toEqual({ updated: 0, errors: [{ id: product.id, code: 'CORE_INVALID_LINK', message: byIds.body.error.message }] });
      expect((await t.get(`${base}/Product/${product.id}`).expect(200)).body.categoriesIds).toEqual([shoes.id]);
      expect(await count('Category')).toBe(categories);
    });

    it('refuses them from the other side of a list', async () => {
      const brand = (await t.post(`${base}/Brand`, { name: `ids-brand-${gen}` }).expect(200)).body;
      const category = (await t.post(`${base}/Category`, { name: 'C', code: `ids-c-${gen}` }).expect(200)).body;
      for (const path of [`${base}/Brand/${brand.id}`, `${base}/Category/${category.id}`]) {
        const res = await t.patch(path, { products: ['missing'] }).expect(400);
        expect(res.body.error.code).toBe('CORE_INVALID_LINK');
      }
    });

    it('refuses an option of another list', async () => {
      const item = (await t.post(`${base}/Item`, { name: 'I' }).expect(200)).body;
      const byIds = await t.patch(`${base}/Item/${item.id}`, { tagsIds: [draft] }).expect(400);
      const res = await t.patch(`${base}/Item/${item.id}`, { tags: [draft] }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message: byIds.body.error.message });
      expect((await t.get(`${base}/Item/${item.id}`).expect(200)).body.tagsIds).toEqual([]);
    });

    it('answers a record the caller may not read as a missing one', async () => {
      const hidden = (await t.post(`${base}/Category`, { name: 'Hidden', code: `ids-hidden-${gen}` }).expect(200)).body;
      const mine = (await user.post(`${base}/Product`, { name: 'Mine' }).expect(200)).body;
      const byIds = await user.patch(`${base}/Product/${mine.id}`, { categoriesIds: [hidden.id] }).expect(400);
      const res = await user.patch(`${base}/Product/${mine.id}`, { categories: [hidden.id] }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message: byIds.body.error.message });
      expect((await t.get(`${base}/Product/${mine.id}`).expect(200)).body.categoriesIds).toEqual([]);
    });
  });
});
