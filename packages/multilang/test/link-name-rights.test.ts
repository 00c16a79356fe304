import meta from '@entity-records/meta';
import multilang from '@entity-records/multilang';
import { defineEntity } from '@entity-records/core';
import { countQueries, GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../test/support/users';
import { Brand } from './fixtures';

type Rec = Record<string, unknown> & { id: string };

const Category = defineEntity({
  name: 'Category',
  fields: {
    name: { type: 'varchar', required: true, isMultilang: true },
    code: { type: 'varchar', required: true, unique: true },
    parent: { type: 'link', entity: 'Category' },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' },
  },
});

const Product = defineEntity({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true, isMultilang: true },
    sku: { type: 'varchar', unique: true },
    mpn: { type: 'varchar' },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'status' },
    tags: { type: 'linkMultiple', entity: 'ExtensibleEnumOption', extensibleEnum: 'status' },
  },
});

const FLAT = { 'Flatten-Attributes': 'true' };
const READ = { read: 'all' };
/** Rights to read every type the answers below show. */
const SCOPES = { Product: READ, Category: READ, ExtensibleEnumOption: READ, Attribute: READ };
/** The German variants of every linked type's name, hidden. */
const HIDDEN = { nameDeDE: { read: false } };
const HIDE_ALL = { Product: HIDDEN, Category: HIDDEN, ExtensibleEnumOption: HIDDEN, Attribute: HIDDEN };

describe.each(TEST_DBS)('names of linked records in a language, by the rights on the linked type, on %s', (kind) => {
  let t: TestApi;
  let chairs: Rec;
  let furniture: Rec;
  let stuhl: Rec;
  let ready: Rec;
  /** May not read the German variants of any name. */
  let hidden: UserClient;
  /** May read them (the same rights otherwise). */
  let open: UserClient;
  /** Reads products only: no right on Category, ExtensibleEnumOption or Attribute. */
  let productsOnly: UserClient;
  /** One role reads categories without their German name, another names Category without granting read. */
  let mixed: UserClient;
  /** Edits products; may not read the German names of categories and options. */
  let editor: UserClient;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Brand, Category, Product], plugins: [multilang, meta], languages: ['en_US', 'de_DE'], auth: { tokenCacheSeconds: 3600 } });
    const list = (await t.post('/api/ExtensibleEnum', { code: 'status', name: 'Status' }).expect(200)).body;
    ready = (await t.post('/api/ExtensibleEnumOption', { code: 'ready', name: 'Ready', nameDeDE: 'Bereit', extensibleEnumId: list.id }).expect(200)).body;
    furniture = (await t.post('/api/Category', { name: 'Furniture', nameDeDE: 'Möbel', code: 'furniture' }).expect(200)).body;
    chairs = (await t.post('/api/Category', { name: 'Chairs', nameDeDE: 'Stühle', code: 'chairs', parentId: furniture.id }).expect(200)).body;
    await t.post('/api/Attribute', { code: 'shelf', name: 'Shelf', nameDeDE: 'Regal', type: 'link', entityType: 'Product', linkEntity: 'Category' }).expect(200);
    stuhl = (
      await t
        .post('/api/Product', { name: 'Chair', nameDeDE: 'Stuhl', sku: 'CH', categoriesIds: [chairs.id], statusId: ready.id, tagsIds: [ready.id], shelfId: chairs.id })
        .set(FLAT)
        .expect(200)
    ).body;
    hidden = await userWithRole(t, { scopes: SCOPES, fields: HIDE_ALL });
    open = await userWithRole(t, { scopes: SCOPES });
    productsOnly = await userWithRole(t, { scopes: { Product: READ } });
    editor = await userWithRole(t, { scopes: { ...SCOPES, Product: { read: 'all', edit: 'all' } }, fields: { Category: HIDDEN, ExtensibleEnumOption: HIDDEN } });
    mixed = await userWithRole(t, { scopes: { Product: READ, Category: READ }, fields: { Category: HIDDEN } });
    const naming = (await t.post('/api/Role', { name: 'names Category, reads none', scopes: { Category: { read: 'no' } } }).expect(200)).body;
    const roles = (await t.get(`/api/User/${mixed.user.id}`).expect(200)).body.rolesIds;
    await t.patch(`/api/User/${mixed.user.id}`, { rolesIds: [...roles, naming.id] }).expect(200);
  });
  afterAll(() => t.close());

  /** What a reader sees of the names, by its rights: German where it may read the variant. */
  const names = (german: boolean) => ({
    product: german ? 'Stuhl' : 'Chair',
    category: german ? 'Stühle' : 'Chairs',
    parent: german ? 'Möbel' : 'Furniture',
    option: german ? 'Bereit' : 'Ready',
    label: german ? 'Regal' : 'Shelf',
  });

  describe.each(GENERATIONS)('generation %s (%s)', (gen, base) => {
    const de = (client: UserClient, path: string) => client.get(path).set('language', 'de_DE').expect(200);

    it.each([
      ['may not read the variants', false],
      ['may read them', true],
    ])('a reader who %s sees the names of records, links and linked records in that language only then', async (_what, german) => {
      const client = german ? open : hidden;
      const n = names(german);

      // A category: its own name, the products linking it, its parent.
      const category = (await de(client, `${base}/Category/${chairs.id}`)).body;
      expect(category).toMatchObject({ name: n.category, parentName: n.parent, productsNames: { [stuhl.id]: n.product } });
      const categories = (await de(client, `${base}/Category?where[0][type]=equals&where[0][attribute]=code&where[0][value]=chairs`)).body.list;
      expect(categories).toEqual([expect.objectContaining({ name: n.category, parentName: n.parent, productsNames: { [stuhl.id]: n.product } })]);

      // A product: its categories, its options (with their _meta), its link attribute (flattened and nested).
      const product = (await de(client, `${base}/Product/${stuhl.id}`).set('With-Meta', 'true')).body;
      expect(product).toMatchObject({ name: n.product, categoriesNames: { [chairs.id]: n.category }, statusName: n.option, tagsNames: { [ready.id]: n.option } });
      expect(product._meta.options).toEqual({ status: expect.objectContaining({ name: n.option }), tags: [expect.objectContaining({ name: n.option })] });
      const products = (await de(client, `${base}/Product?where[0][type]=equals&where[0][attribute]=sku&where[0][value]=CH`).set('With-Meta', 'true')).body.list;
      expect(products).toEqual([expect.objectContaining({ name: n.product, categoriesNames: { [chairs.id]: n.category }, statusName: n.option })]);
      expect(products[0]._meta.options.status.name).toBe(n.option);
      const flat = (await de(client, `${base}/Product/${stuhl.id}`).set(FLAT)).body;
      expect(flat).toMatchObject({ shelfName: n.category, attributesDefs: { shelf: expect.objectContaining({ label: n.label }) } });
      const flatList = (await de(client, `${base}/Product?select=name&attributes=shelf&where[0][type]=equals&where[0][attribute]=sku&where[0][value]=CH`).set(FLAT)).body.list;
      expect(flatList[0]).toMatchObject({ shelfName: n.category });
      const values = (await de(client, `${base}/Product/${stuhl.id}/attributeValues`)).body;
      expect(values).toEqual([expect.objectContaining({ code: 'shelf', name: n.label, valueName: n.category })]);

      // Linked records, from either side.
      const linked = [`${base}/entityRelation?entityName=Category&id=${chairs.id}&link=products`, `${base}/entityRelation?entityName=Product&id=${stuhl.id}&link=categories`];
      if (gen === 'B') linked.push(`${base}/Category/${chairs.id}/products`, `${base}/Product/${stuhl.id}/categories`);
      for (const path of linked) {
        const list = (await de(client, path)).body.list;
        expect(list).toHaveLength(1);
        expect(list[0]).toMatchObject(path.includes('products') ? { name: n.product, categoriesNames: { [chairs.id]: n.category } } : { name: n.category, productsNames: { [stuhl.id]: n.product }, parentName: n.parent });
      }
    });

    it('hides a variant of a linked type that some role reads, even when another role names the type without reading it', async () => {
      const product = (await de(mixed, `${base}/Product/${stuhl.id}`)).body;
      expect(product).toMatchObject({ name: 'Stuhl', categoriesNames: { [chairs.id]: 'Chairs' } });
      const category = (await de(mixed, `${base}/Category/${chairs.id}`)).body;
      expect(category).toMatchObject({ name: 'Chairs', parentName: 'Furniture', productsNames: { [stuhl.id]: 'Stuhl' } });
    });

    it('names the records of a link in the language for a reader without rights on the linked type, as it shows their main names', async () => {
      const product = (await de(productsOnly, `${base}/Product/${stuhl.id}`)).body;
      expect(product).toMatchObject({ name: 'Stuhl', categoriesNames: { [chairs.id]: 'Stühle' }, statusName: 'Bereit' });
    });

    it('shows no name the reader may not read in upsert results, whatever the header', async () => {
      const res = await editor.post(`${base}/upsert`, [{ entity: 'Product', payload: { sku: 'CH', mpn: base } }]).set('language', 'de_DE').expect(200);
      expect(res.body[0]).toMatchObject({ status: 'Updated', entity: { name: 'Chair', nameDeDE: 'Stuhl', mpn: base } });
      expect(JSON.stringify(res.body)).not.toMatch(/Stühle|Bereit/);
    });
  });

  it('reads a page for a reader who may not read the variants in a constant number of queries', async () => {
    for (let i = 0; i < 12; i++) await t.post('/api/Product', { name: `P${i}`, nameDeDE: `D${i}`, categoriesIds: [chairs.id], statusId: ready.id }).expect(200);
    const count = async (client: UserClient, path: string) => {
      const send = () => client.get(path).set('language', 'de_DE').expect(200);
      await send();
      return countQueries(t, send);
    };
    for (const client of [hidden, open]) {
      const small = await count(client, '/api/Product?select=name,categories,status&maxSize=3');
      expect(await count(client, '/api/Product?select=name,categories,status&maxSize=15')).toBe(small);
    }
    // No query for names the reader gets in the main language: the page's own query has them.
    expect(await count(hidden, '/api/Product?select=name,categories,status&maxSize=15')).toBeLessThan(await count(open, '/api/Product?select=name,categories,status&maxSize=15'));
  });
});
