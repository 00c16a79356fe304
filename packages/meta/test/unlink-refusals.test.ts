import { defineEntity, definePlugin } from '@entity-records/core';
import meta from '@entity-records/meta';
import { GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../test/support/users';

type Rec = Record<string, any> & { id: string };

const Brand = defineEntity({
  name: 'Brand',
  fields: {
    name: { type: 'varchar', required: true },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'brand' },
    // Taking a product off this list would leave its required maker empty.
    made: { type: 'linkMultiple', entity: 'Product', foreign: 'maker' },
  },
});
const Category = defineEntity({
  name: 'Category',
  fields: { name: { type: 'varchar', required: true }, products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' } },
});
/** Links the routes refuse to empty: a required one (`maker`) and read-only ones, which a hook fills. */
const Product = defineEntity({
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true },
    brand: { type: 'link', entity: 'Brand' },
    maker: { type: 'link', entity: 'Brand', required: true },
    fixed: { type: 'link', entity: 'Brand', readOnly: true },
    fixedMany: { type: 'linkMultiple', entity: 'Brand', readOnly: true },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
  },
});

const filler = definePlugin({
  name: 'fills read-only links',
  setup(api) {
    api.onRecord('beforeCreate', 'Product', ({ data }) => {
      if (!data) return;
      data.fixedId = data.brandId;
      data.fixedManyIds = [data.brandId];
    });
  },
});

const EVERYTHING = { Product: { read: 'all', create: true, edit: 'all' }, Brand: { read: 'all', edit: 'all' }, Category: { read: 'all', edit: 'all' }, User: { read: 'all' } };
const ROLES: Record<string, { scopes: Record<string, Record<string, unknown>>; fields?: Record<string, Record<string, Record<string, boolean>>> }> = {
  everything: { scopes: EVERYTHING },
  // Product.brand is editable, but the other side of the relation (Brand.products) is locked.
  'other side locked': { scopes: EVERYTHING, fields: { Brand: { products: { edit: false } } } },
  'categories locked from Category': { scopes: EVERYTHING, fields: { Category: { products: { edit: false } } } },
};

/** [entity, link] from a product (or its brand): every kind of link the routes may refuse. */
const CASES = [
  ['Product', 'createdBy'],
  ['Product', 'modifiedBy'],
  ['Product', 'fixed'],
  ['Product', 'fixedMany'],
  ['Product', 'maker'],
  ['Product', 'brand'],
  ['Product', 'categories'],
  ['Brand', 'products'],
  ['Brand', 'made'],
] as const;

/**
 * `_meta.permissions.unlink` tells what the unlink route does (CONTRACT §11): false for the
 * server's links (404), read-only links and a required single link (400), and a link whose other
 * side the caller may not edit (403), as for the rights the routes judge.
 */
describe.each(TEST_DBS)('_meta.permissions.unlink where the unlink route refuses, on %s', (kind) => {
  let t: TestApi;
  let users: Record<string, UserClient | undefined>;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Brand, Category, Product], plugins: [meta, filler] });
    users = { admin: undefined };
    for (const [name, role] of Object.entries(ROLES)) users[name] = await userWithRole(t, role);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it.each(['admin', ...Object.keys(ROLES)])('what _meta says for %s is what DELETE /{Entity}/{id}/{link} does', async (name) => {
      const user = users[name] ?? t;
      const brand = (await t.post('/api/Brand', { name: `Brand ${name} ${gen}` }).expect(200)).body.id as string;
      const category = (await t.post('/api/Category', { name: `Category ${name} ${gen}` }).expect(200)).body.id as string;
      const product = (await t.post('/api/Product', { name: 'P', brandId: brand, makerId: brand, categoriesIds: [category] }).expect(200)).body;
      expect([product.fixedId, product.fixedManyIds]).toEqual([brand, [brand]]);
      const seen: [string, string, boolean, number][] = [];
      for (const [entity, link] of CASES) {
        const id = entity === 'Brand' ? brand : product.id;
        const paths = [`${base}/entityRelation?entityName=${entity}&id=${id}&link=${link}`, ...(gen === 'B' ? [`${base}/${entity}/${id}/${link}`] : [])];
        const said = new Set<boolean>();
        let target = '';
        for (const path of paths) {
          const listed = (await user.get(path).set('With-Meta', 'true').expect(200)).body.list as Rec[];
          expect(listed).toHaveLength(1);
          said.add(listed[0]._meta.permissions.unlink);
          target = listed[0].id;
        }
        expect([entity, link, said.size]).toEqual([entity, link, 1]);
        const res = await user.del(`${base}/${entity}/${id}/${link}?id=${target}`);
        seen.push([entity, link, [...said][0], res.status]);
        // linked again for the next role
        if (res.status === 200) await t.post(`/api/${entity}/${id}/${link}`, { id: target }).expect(200);
      }
      expect(seen.map(([entity, link, said, status]) => [entity, link, said, status === 200])).toEqual(seen.map(([entity, link, said]) => [entity, link, said, said]));
      // The refusals: the server's links 404, the links no update may empty 400, the rights 403.
      const refused = Object.fromEntries(seen.filter(([, , said]) => !said).map(([entity, link, , status]) => [`${entity}.${link}`, status]));
      const always = { 'Product.createdBy': 404, 'Product.modifiedBy': 404, 'Product.fixed': 400, 'Product.fixedMany': 400, 'Product.maker': 400, 'Brand.made': 400 };
      const byRole: Record<string, Record<string, number>> = {
        admin: {},
        everything: {},
        'other side locked': { 'Product.brand': 403, 'Brand.products': 403 },
        'categories locked from Category': { 'Product.categories': 403 },
      };
      expect(refused).toEqual({ ...always, ...byRole[name] });
    });
  });
});
