import { defineEntity, systemContext } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const Item = defineEntity({
  name: 'Item',
  fields: {
    name: { type: 'varchar', required: true },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'item_status' },
    tags: { type: 'linkMultiple', entity: 'ExtensibleEnumOption', extensibleEnum: 'item_tags' },
    brand: { type: 'link', entity: 'Brand' },
  },
});

describe.each(TEST_DBS)('find-or-create linking on %s', (kind) => {
  let t: TestApi;
  const lists: Record<string, string> = {};
  const count = async (entity: string) => (await t.get(`/api/${entity}?totalOnly=true`).expect(200)).body.total as number;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [...testEntities, Item] });
    const repo = t.api.repository('ExtensibleEnum');
    for (const code of ['item_status', 'item_tags']) lists[code] = (await repo.create(systemContext(), { code, name: code })).id;
    await t.api.repository('ExtensibleEnumOption').create(systemContext(), { code: 'draft', name: 'Draft', extensibleEnumId: lists.item_status });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('links an existing record matched by its fields, or creates it', async () => {
      const acme = (await t.post(`${base}/Brand`, { name: `Acme ${gen}`, code: 'A' }).expect(200)).body;
      const found = (await t.post(`${base}/Product`, { name: 'P1', brand: { name: `Acme ${gen}` } }).expect(200)).body;
      expect(found).toMatchObject({ brandId: acme.id, brandName: `Acme ${gen}` });
      const brands = await count('Brand');
      const created = (await t.post(`${base}/Product`, { name: 'P2', brand: { name: `Newco ${gen}`, code: 'N' } }).expect(200)).body;
      expect(created.brandName).toBe(`Newco ${gen}`);
      expect(await count('Brand')).toBe(brands + 1);
      const brand = (await t.get(`${base}/Brand/${created.brandId}`).expect(200)).body;
      expect(brand).toMatchObject({ name: `Newco ${gen}`, code: 'N' });
    });

    it('treats each array element of a multiple link independently, mixing ids and objects', async () => {
      const shoes = (await t.post(`${base}/Category`, { name: 'Shoes', code: `shoes-${gen}` }).expect(200)).body;
      const p = (
        await t
          .post(`${base}/Product`, {
            name: 'Multi',
            categories: [{ code: `shoes-${gen}` }, { name: 'Hats', code: `hats-${gen}` }, shoes.id],
          })
          .expect(200)
      ).body;
      expect(p.categoriesIds).toHaveLength(2);
      expect(Object.values(p.categoriesNames).sort()).toEqual(['Hats', 'Shoes']);
      const updated = (await t.patch(`${base}/Product/${p.id}`, { categories: [{ code: `boots-${gen}`, name: 'Boots' }] }).expect(200)).body;
      expect(Object.values(updated.categoriesNames)).toEqual(['Boots']);
    });

    it('refuses nested objects, non-simple fields and ambiguous matches, storing nothing', async () => {
      const before = [await count('Product'), await count('Brand'), await count('Category')];
      const nested = await t.post(`${base}/Product`, { name: 'X', categories: [{ name: 'C', code: `c-${gen}`, parent: { name: 'P' } }] }).expect(400);
      expect(nested.body.error.code).toBe('CORE_VALIDATION_FAILED');
      await t.post(`${base}/Product`, { name: 'X', categories: [{ name: 'C', code: `c-${gen}`, parentId: 'x' }] }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', brand: {} }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', brand: 'just-a-string' }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', brand: { name: 'B' }, brandId: 'x' }).expect(400);
      await t.post(`${base}/Category`, { name: 'Twin', code: `twin1-${gen}` }).expect(200);
      await t.post(`${base}/Category`, { name: 'Twin', code: `twin2-${gen}` }).expect(200);
      before[2] += 2;
      const ambiguous = await t.post(`${base}/Product`, { name: 'X', brand: { name: `Fresh ${gen}` }, categories: [{ name: 'Twin' }] }).expect(409);
      expect(ambiguous.body.error).toMatchObject({ code: 'CORE_CONFLICT', details: { field: 'categories' } });
      const failedLate = await t.post(`${base}/Product`, { name: 'X', brand: { name: `Fresh2 ${gen}` }, categoriesIds: ['missing'] }).expect(400);
      expect(failedLate.body.error.code).toBe('CORE_INVALID_LINK');
      expect([await count('Product'), await count('Brand'), await count('Category')]).toEqual(before);
    });

    it('refuses what is wrong inside a link object in a mass update with the 400 of PATCH, before it starts (also as a job)', async () => {
      const product = (await t.post(`${base}/Product`, { name: 'Mass target' }).expect(200)).body;
      const before = [await count('Brand'), await count('Category'), await count('Job')];
      const bodies = [{ brand: {} }, { brand: { name: 'B', nope: 1 } }, { brand: { name: 'B', products: [] } }, { brand: { name: 5 } }, { categories: [{ name: 'C', code: `mc-${gen}`, parent: { name: 'P' } }] }];
      for (const values of bodies) {
        const patched = (await t.patch(`${base}/Product/${product.id}`, values).expect(400)).body.error;
        for (const select of [{ ids: [product.id] }, { where: [{ type: 'equals', attribute: 'id', value: product.id }] }]) {
          const mass = (await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ...select, values }).expect(400)).body.error;
          expect(mass).toMatchObject({ code: patched.code, message: patched.message });
          expect(mass.details.issues).toEqual(patched.details.issues.map((issue: { path: unknown[] }) => ({ ...issue, path: ['values', ...issue.path] })));
        }
      }
      expect([await count('Brand'), await count('Category'), await count('Job')]).toEqual(before);
    });

    it('finds and creates options only inside the list of the field', async () => {
      const item = (await t.post(`${base}/Item`, { name: 'I1', status: { code: 'draft' }, tags: [{ code: 'draft', name: 'Draft tag' }] }).expect(200)).body;
      const status = (await t.get(`${base}/ExtensibleEnumOption/${item.statusId}`).expect(200)).body;
      expect(status.extensibleEnumId).toBe(lists.item_status);
      const tagId = item.tagsIds[0];
      expect(tagId).not.toBe(item.statusId);
      expect((await t.get(`${base}/ExtensibleEnumOption/${tagId}`).expect(200)).body.extensibleEnumId).toBe(lists.item_tags);
      const again = (await t.post(`${base}/Item`, { name: 'I2', tags: [{ code: 'draft' }] }).expect(200)).body;
      expect(again.tagsIds).toEqual([tagId]);
      const wrongList = await t.post(`${base}/Item`, { name: 'I3', statusId: tagId }).expect(400);
      expect(wrongList.body.error.code).toBe('CORE_INVALID_LINK');
    });
  });
});
