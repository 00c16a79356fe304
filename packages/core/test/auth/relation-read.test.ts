import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole, type UserClient } from '../../../../test/support/users';

const where = (items: unknown[]) => `where=${encodeURIComponent(JSON.stringify(items))}`;

/**
 * A link and the link of the other side state one relation (`Product.brand` and `Brand.products`,
 * `Product.categories` and `Category.products`): a field hidden on one side is hidden on the
 * other, in answers, `select`, filters, linked-record lists and change diffs.
 */
describe.each(TEST_DBS)('a hidden relation seen from the other side on %s', (kind) => {
  let t: TestApi;
  let user: UserClient;
  let brand: string;
  let category: string;
  let product: string;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    brand = (await t.post('/api/Brand', { name: 'Hidden relation' }).expect(200)).body.id;
    category = (await t.post('/api/Category', { name: 'Hidden', code: 'hidden-relation' }).expect(200)).body.id;
    product = (await t.post('/api/Product', { name: 'Related', brandId: brand, categoriesIds: [category] }).expect(200)).body.id;
    const second = (await t.post('/api/Product', { name: 'Related too' }).expect(200)).body.id;
    // A change of the brand whose diff holds its list of products.
    await t.patch(`/api/Brand/${brand}`, { productsIds: [product, second] }).expect(200);
    await t.patch(`/api/Brand/${brand}`, { productsIds: [product] }).expect(200);
    const all = { read: 'all', stream: true };
    user = await userWithRole(t, {
      scopes: { Product: all, Brand: all, Category: all },
      fields: { Product: { brand: { read: false, edit: false }, categories: { read: false, edit: false } } },
    });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('leaves the list of the other side out of answers, and refuses to select or filter by it (403)', async () => {
      const seen = (await user.get(`${base}/Brand/${brand}`).expect(200)).body;
      expect(seen.name).toBe('Hidden relation');
      expect(seen).not.toHaveProperty('productsIds');
      expect(seen).not.toHaveProperty('productsNames');
      expect((await user.get(`${base}/Category/${category}`).expect(200)).body).not.toHaveProperty('productsIds');
      const listed = (await user.get(`${base}/Brand?${where([{ type: 'equals', attribute: 'id', value: brand }])}`).expect(200)).body.list;
      expect(listed[0]).not.toHaveProperty('productsIds');
      await user.get(`${base}/Brand/${brand}?select=products`).expect(403);
      await user.get(`${base}/Brand?${where([{ type: 'linkedWith', attribute: 'products', value: [product] }])}`).expect(403);
      await user.get(`${base}/Category?${where([{ type: 'isLinked', attribute: 'products' }])}`).expect(403);
      // Refused before anything is said of the field: an operator its type does not take is 403 too, not 400.
      await user.get(`${base}/Brand?${where([{ type: 'greaterThan', attribute: 'products', value: 1 }])}`).expect(403);
      // The product itself shows neither.
      const p = (await user.get(`${base}/Product/${product}`).expect(200)).body;
      expect(p).not.toHaveProperty('brandId');
      expect(p).not.toHaveProperty('categoriesIds');
    });

    it('refuses the linked-record list of the other side, and leaves the list out of its change diffs', async () => {
      const linked = base === '/api' ? `/api/entityRelation?entityName=Brand&id=${brand}&link=products` : `/api/v1/Brand/${brand}/products`;
      await user.get(linked).expect(403);
      const stream = (await user.get(`/api/v1/Brand/${brand}/stream`).expect(200)).body.list as { diff: Record<string, unknown> }[];
      expect(stream.length).toBeGreaterThan(0);
      for (const change of stream) expect(change.diff).not.toHaveProperty('productsIds');
      const all = (await t.get(`/api/v1/Brand/${brand}/stream`).expect(200)).body.list as { diff: Record<string, unknown> }[];
      expect(all.filter((c) => 'productsIds' in c.diff)).toHaveLength(2);
    });
  });

  it('an admin sees both sides', async () => {
    expect((await t.get(`/api/Brand/${brand}`).expect(200)).body.productsIds).toEqual([product]);
    expect((await t.get(`/api/Product/${product}`).expect(200)).body.brandId).toBe(brand);
  });
});

/**
 * A one-to-many list (`Brand.productsIds`) is not a value the brand stores but the products that
 * link to it: a reader sees those it may read, as in the linked-record list and a list of
 * products (`own`: its own), and none of it without read on the target type. Links a record stores
 * itself (a product's `brandId`) show as stored.
 */
describe.each(TEST_DBS)('one-to-many lists as the reader may read their records on %s', (kind) => {
  let t: TestApi;
  let brand: string;
  let theirs: string;
  let own: UserClient;
  let none: UserClient;
  let mine: string;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    brand = (await t.post('/api/Brand', { name: 'Listed brand' }).expect(200)).body.id;
    theirs = (await t.post('/api/Product', { name: 'Admin product', brandId: brand }).expect(200)).body.id;
    own = await userWithRole(t, { scopes: { Product: { read: 'own', create: true, edit: 'own' }, Brand: { read: 'all', edit: 'all', stream: true } } });
    none = await userWithRole(t, { scopes: { Brand: { read: 'all', edit: 'all', create: true } } });
    mine = (await own.post('/api/Product', { name: 'Own product', brandId: brand }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('shows in a record, a list and a write answer only the records the reader may read', async () => {
      const read = (await own.get(`${base}/Brand/${brand}`).expect(200)).body;
      expect(read.productsIds).toEqual([mine]);
      expect(read.productsNames).toEqual({ [mine]: 'Own product' });
      const listed = (await own.get(`${base}/Brand?${where([{ type: 'equals', attribute: 'id', value: brand }])}`).expect(200)).body.list;
      expect(listed[0].productsIds).toEqual([mine]);
      const written = (await own.patch(`${base}/Brand/${brand}`, { code: `listed-${base.length}` }).expect(200)).body;
      expect(written.productsIds).toEqual([mine]);
      expect(written.productsNames).not.toHaveProperty(theirs);
      // As the linked-record list answers.
      const linked = base === '/api' ? `/api/entityRelation?entityName=Brand&id=${brand}&link=products` : `/api/v1/Brand/${brand}/products`;
      expect((await own.get(linked).expect(200)).body.list.map((p: { id: string }) => p.id)).toEqual([mine]);
      // An admin sees both.
      expect((await t.get(`${base}/Brand/${brand}`).expect(200)).body.productsIds.sort()).toEqual([theirs, mine].sort());
    });

    it('refuses filters on a list the reader sees part of, and leaves it out of change diffs', async () => {
      await own.get(`${base}/Brand?${where([{ type: 'linkedWith', attribute: 'products', value: [theirs] }])}`).expect(403);
      await own.get(`${base}/Brand?${where([{ type: 'isLinked', attribute: 'products' }])}`).expect(403);
      // A change of the brand's list, written from its side, shows in the reader's stream without the list.
      const other = (await t.post(`${base}/Brand`, { name: `Written list ${base.length}` }).expect(200)).body.id;
      await t.post(`${base}/Brand/${other}/products`, { id: theirs }).expect(200);
      const changes = (await own.get(`/api/v1/Brand/${other}/stream`).expect(200)).body.list as { action: string; diff: Record<string, unknown> }[];
      expect(changes.length).toBeGreaterThan(1);
      for (const change of changes) expect(change.diff).not.toHaveProperty('productsIds');
      const all = (await t.get(`/api/v1/Brand/${other}/stream`).expect(200)).body.list as { diff: Record<string, unknown> }[];
      expect(all.some((c) => 'productsIds' in c.diff)).toBe(true);
      await t.post(`${base}/Brand/${brand}/products`, { id: theirs }).expect(200);
    });

    it('refuses every write of the list to a reader of no record of its type (403)', async () => {
      const path = base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
      const message = 'Not allowed to edit Brand.products';
      expect((await none.patch(`${base}/Brand/${brand}`, { productsIds: [] }).expect(403)).body.error.message).toBe(message);
      expect((await none.del(`${base}/Brand/${brand}/products?id=${theirs}`).expect(403)).body.error.message).toBe(message);
      expect((await none.post(`${base}/Brand`, { name: `None's ${base.length}`, productsIds: [] }).expect(403)).body.error.message).toBe(message);
      const [item] = (await none.post(path, [{ entity: 'Brand', payload: { id: brand, productsIds: [] } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'Failed', message });
      expect((await t.get(`${base}/Brand/${brand}`).expect(200)).body.productsIds.sort()).toEqual([theirs, mine].sort());
    });

    it('leaves the list out for a reader of no record of its type, and out of upsert results where it is cut', async () => {
      const read = (await none.get(`${base}/Brand/${brand}`).expect(200)).body;
      expect(read.name).toBe('Listed brand');
      expect(read).not.toHaveProperty('productsIds');
      expect(read).not.toHaveProperty('productsNames');
      await none.get(`${base}/Brand/${brand}?select=products`).expect(403);
      const path = base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
      for (const user of [own, none]) {
        const [result] = (await user.post(path, [{ entity: 'Brand', payload: { id: brand, name: 'Listed brand' } }]).expect(200)).body;
        expect(result.status).toBe('NotModified');
        expect(result.entity).not.toHaveProperty('productsIds');
      }
      const [admin] = (await t.post(path, [{ entity: 'Brand', payload: { id: brand, name: 'Listed brand' } }]).expect(200)).body;
      expect(admin.entity.productsIds.sort()).toEqual([theirs, mine].sort());
    });
  });
});
