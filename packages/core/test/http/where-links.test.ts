import http from 'node:http';
import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { expectWhereError, whereNames } from './list-helpers';

/*
 * Brands b1 (products p1, p2), b2 (p3), b3 (none), b4 (only p-gone, soft-deleted), b-gone
 * (soft-deleted, p6). Categories c1, c2, c3 (soft-deleted), c4 (child of c1).
 * Products: p1 [c1, c2], p2 [c2], p3 [], p4 (no brand, [c3 only]), p5 (no brand, [c4]), p6 [].
 */
describe.each(TEST_DBS)('link and array operators on %s', (kind) => {
  let t: TestApi;
  const id: Record<string, string> = {};

  beforeAll(async () => {
    // A statement past 5 s is 503 on PostgreSQL: a where that takes seconds to plan shows.
    t = await startTestApi(kind, { entities: testEntities, statementTimeoutMs: 5000 });
    const create = async (entity: string, key: string, body: Record<string, unknown>) => {
      id[key] = (await t.post(`/api/${entity}`, body).expect(200)).body.id;
    };
    for (const b of ['b1', 'b2', 'b3', 'b4', 'b-gone']) await create('Brand', b, { name: b });
    for (const c of ['c1', 'c2', 'c3']) await create('Category', c, { name: c, code: c });
    await create('Category', 'c4', { name: 'c4', code: 'c4', parentId: id.c1 });
    const product = (name: string, brand: string | null, categories: string[], labels: string[] | null) =>
      create('Product', name, { name, brandId: brand && id[brand], categoriesIds: categories.map((c) => id[c]), labels });
    await product('p1', 'b1', ['c1', 'c2'], ['new', 'sale']);
    await product('p2', 'b1', ['c2'], ['eco']);
    await product('p3', 'b2', [], []);
    await product('p4', null, ['c3'], null);
    await product('p5', null, ['c4'], ['sale']);
    await product('p6', 'b-gone', [], null);
    await product('p-gone', 'b4', ['c1'], ['new']);
    await t.del(`/api/Brand/${id['b-gone']}`).expect(200);
    await t.del(`/api/Product/${id['p-gone']}`).expect(200);
    await t.del(`/api/Category/${id.c3}`).expect(200);
  });
  afterAll(() => t.close());

  const ALL = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    const products = (items: unknown[]) => whereNames(t, base, 'Product', items);
    const brands = (items: unknown[]) => whereNames(t, base, 'Brand', items);
    const categories = (items: unknown[]) => whereNames(t, base, 'Category', items);
    const ids = (...keys: string[]) => keys.map((k) => id[k]);
    const cond = (type: string, attribute: string, value?: unknown) => (value === undefined ? { type, attribute } : { type, attribute, value });

    it('linkedWith / notLinkedWith / isLinked / isNotLinked on a single link', async () => {
      expect(await products([cond('linkedWith', 'brand', ids('b1'))])).toEqual(['p1', 'p2']);
      expect(await products([cond('linkedWith', 'brand', ids('b1', 'b2'))])).toEqual(['p1', 'p2', 'p3']);
      expect(await products([cond('linkedWith', 'brandId', ids('b2'))])).toEqual(['p3']);
      expect(await products([cond('linkedWith', 'brand', ids('b3'))])).toEqual([]);
      expect(await products([cond('linkedWith', 'brand', [])])).toEqual([]);
      expect(await products([cond('notLinkedWith', 'brand', ids('b1'))])).toEqual(['p3', 'p4', 'p5', 'p6']);
      expect(await products([cond('notLinkedWith', 'brand', [])])).toEqual(ALL);
      // p6 points at a soft-deleted brand: that is no link.
      expect(await products([cond('isLinked', 'brand')])).toEqual(['p1', 'p2', 'p3']);
      expect(await products([cond('isNotLinked', 'brand')])).toEqual(['p4', 'p5', 'p6']);
      expect(await products([cond('linkedWith', 'brand', ids('b-gone'))])).toEqual([]);
      expect(await products([cond('notLinkedWith', 'brand', ids('b-gone', 'b2'))])).toEqual(['p1', 'p2', 'p4', 'p5', 'p6']);
      expect(await categories([cond('isLinked', 'parent')])).toEqual(['c4']);
      expect(await categories([cond('linkedWith', 'parent', ids('c1'))])).toEqual(['c4']);
    });

    it('compares a single link by id with equals, in and notIn', async () => {
      expect(await products([cond('in', 'brandId', ids('b1', 'b2'))])).toEqual(['p1', 'p2', 'p3']);
      expect(await products([cond('in', 'brandId', ids('b3', 'b4'))])).toEqual([]);
      expect(await products([cond('notIn', 'brandId', ids('b1'))])).toEqual(['p3', 'p4', 'p5', 'p6']);
      expect(await products([cond('equals', 'brandId', id.b2)])).toEqual(['p3']);
      expect(await products([cond('notEquals', 'brandId', id.b2)])).toEqual(['p1', 'p2', 'p4', 'p5', 'p6']);
      expect(await products([cond('isNull', 'brandId')])).toEqual(['p4', 'p5']);
    });

    it('linkedWith / notLinkedWith / isLinked / isNotLinked on a many-to-many link', async () => {
      expect(await products([cond('linkedWith', 'categories', ids('c1'))])).toEqual(['p1']);
      expect(await products([cond('linkedWith', 'categories', ids('c2'))])).toEqual(['p1', 'p2']);
      expect(await products([cond('linkedWith', 'categoriesIds', ids('c1', 'c4'))])).toEqual(['p1', 'p5']);
      expect(await products([cond('linkedWith', 'categories', [])])).toEqual([]);
      expect(await products([cond('notLinkedWith', 'categories', ids('c2'))])).toEqual(['p3', 'p4', 'p5', 'p6']);
      expect(await products([cond('notLinkedWith', 'categories', ids('c1', 'c4'))])).toEqual(['p2', 'p3', 'p4', 'p6']);
      expect(await products([cond('notLinkedWith', 'categories', [])])).toEqual(ALL);
      // p4 is linked only to the soft-deleted c3: that is no link.
      expect(await products([cond('linkedWith', 'categories', ids('c3'))])).toEqual([]);
      expect(await products([cond('isLinked', 'categories')])).toEqual(['p1', 'p2', 'p5']);
      expect(await products([cond('isNotLinked', 'categories')])).toEqual(['p3', 'p4', 'p6']);
      // From the other side of the same relation.
      expect(await categories([cond('linkedWith', 'products', ids('p2'))])).toEqual(['c2']);
      expect(await categories([cond('isNotLinked', 'products')])).toEqual([]);
      expect(await categories([cond('isLinked', 'products')])).toEqual(['c1', 'c2', 'c4']);
    });

    it('linkedWith / notLinkedWith / isLinked / isNotLinked on a has-many link', async () => {
      expect(await brands([cond('linkedWith', 'products', ids('p3'))])).toEqual(['b2']);
      expect(await brands([cond('linkedWith', 'productsIds', ids('p1', 'p3'))])).toEqual(['b1', 'b2']);
      expect(await brands([cond('linkedWith', 'products', ids('p-gone'))])).toEqual([]);
      expect(await brands([cond('linkedWith', 'products', [])])).toEqual([]);
      expect(await brands([cond('notLinkedWith', 'products', ids('p1'))])).toEqual(['b2', 'b3', 'b4']);
      expect(await brands([cond('notLinkedWith', 'products', [])])).toEqual(['b1', 'b2', 'b3', 'b4']);
      // b4's only product is soft-deleted: b4 counts as not linked.
      expect(await brands([cond('isLinked', 'products')])).toEqual(['b1', 'b2']);
      expect(await brands([cond('isNotLinked', 'products')])).toEqual(['b3', 'b4']);
    });

    it('combines link conditions with groups', async () => {
      const or = [{ type: 'or', value: [cond('linkedWith', 'brand', ids('b2')), cond('linkedWith', 'categories', ids('c4'))] }];
      expect(await products(or)).toEqual(['p3', 'p5']);
      const not = [{ type: 'not', value: [cond('isLinked', 'categories')] }, cond('isNotLinked', 'brand')];
      expect(await products(not)).toEqual(['p4', 'p6']);
    });

    it('arrayAnyOf / arrayNoneOf on a multiEnum', async () => {
      expect(await products([cond('arrayAnyOf', 'labels', ['new'])])).toEqual(['p1']);
      expect(await products([cond('arrayAnyOf', 'labels', ['sale'])])).toEqual(['p1', 'p5']);
      expect(await products([cond('arrayAnyOf', 'labels', ['eco', 'new'])])).toEqual(['p1', 'p2']);
      expect(await products([cond('arrayAnyOf', 'labels', ['nothing'])])).toEqual([]);
      expect(await products([cond('arrayAnyOf', 'labels', [])])).toEqual([]);
      expect(await products([cond('arrayNoneOf', 'labels', ['sale'])])).toEqual(['p2', 'p3', 'p4', 'p6']);
      expect(await products([cond('arrayNoneOf', 'labels', ['new', 'eco'])])).toEqual(['p3', 'p4', 'p5', 'p6']);
      expect(await products([cond('arrayNoneOf', 'labels', [])])).toEqual(ALL);
      // A value that only looks like part of an item matches nothing.
      expect(await products([cond('arrayAnyOf', 'labels', ['ne'])])).toEqual([]);
    });

    it('answers the same records when a where holds more link conditions than are joined (then tested as filters), in groups too', async () => {
      const bases: [string, unknown[]][] = [
        ['Product', [cond('linkedWith', 'brand', ids('b1', 'b-gone'))]],
        ['Product', [cond('notLinkedWith', 'brand', ids('b1'))]],
        ['Product', [cond('isLinked', 'brand')]],
        ['Product', [cond('isNotLinked', 'brand')]],
        ['Product', [cond('linkedWith', 'categories', ids('c1', 'c3'))]],
        ['Product', [cond('notLinkedWith', 'categories', ids('c2'))]],
        ['Product', [cond('isLinked', 'categories')]],
        ['Product', [cond('isNotLinked', 'categories')]],
        ['Product', [{ type: 'or', value: [cond('linkedWith', 'brand', ids('b2')), cond('isNotLinked', 'categories')] }]],
        ['Product', [{ type: 'not', value: [cond('isLinked', 'brand')] }, cond('notLinkedWith', 'categories', ids('c4'))]],
        ['Brand', [cond('isLinked', 'products')]],
        ['Brand', [cond('notLinkedWith', 'products', ids('p1', 'p-gone'))]],
        ['Category', [cond('isNotLinked', 'parent'), cond('isLinked', 'products')]],
      ];
      for (const [entity, items] of bases) {
        const named = (where: unknown[]) => whereNames(t, base, entity, where);
        const few = await named(items);
        // The same conditions nine times over: ANDed, they keep the same records.
        const many = Array.from({ length: 9 }, () => items).flat();
        expect([entity, items, await named(many)]).toEqual([entity, items, few]);
      }
      expect(await products([cond('isLinked', 'brand')])).toEqual(['p1', 'p2', 'p3']);
    });

    it('answers a where of hundreds of link conditions within the statement timeout', async () => {
      // Room for the long query string, as the example server gives (Node's default is 16 KiB).
      const server = http.createServer({ maxHeaderSize: 512 * 1024 }, t.app);
      const names = async (where: unknown[]) => {
        const res = await request(server).get(`${base}/Product?select=name&where=${encodeURIComponent(JSON.stringify(where))}`).set('Authorization-Token', t.token);
        expect([res.status, res.body.error]).toEqual([200, undefined]);
        return (res.body.list as { name: string }[]).map((r) => r.name).sort();
      };
      const many = Array.from({ length: 300 }, (_, i) => (i % 2 ? cond('isLinked', 'categories') : cond('linkedWith', 'categories', ids('c1', 'c2'))));
      expect(await names(many)).toEqual(['p1', 'p2']);
      const alsoBrand = [...many, ...Array.from({ length: 100 }, () => cond('notLinkedWith', 'brand', ids('b2'))), { type: 'not', value: [cond('isNotLinked', 'brand')] }];
      expect(await names(alsoBrand)).toEqual(['p1', 'p2']);
    });

    it.each([
      ['linkedWith on a text field', [cond('linkedWith', 'name', ['x'])]],
      ['isLinked on a multiEnum', [cond('isLinked', 'labels')]],
      ['equals on a multiple link', [cond('equals', 'categories', 'x')]],
      ['in on a has-many link', [cond('in', 'products', ['x'])]],
      ['arrayAnyOf on a link', [cond('arrayAnyOf', 'brand', ['x'])]],
      ['linkedWith with objects', [cond('linkedWith', 'categories', [{ id: 'x' }])]],
      ['an unknown link', [cond('isLinked', 'maker')]],
    ])('answers 400 for %s', async (_what, items) => {
      const entity = (items[0] as { attribute: string }).attribute === 'products' ? 'Brand' : 'Product';
      await expectWhereError(t, base, entity, items);
    });
  });
});
