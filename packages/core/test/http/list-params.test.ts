import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { expectQueryError, jsonWhere, list } from './list-helpers';

type Row = Record<string, unknown> & { id: string };
// Records of one test carry `mpn` `<tag>:<n>` ((brand, mpn) is unique).
const byTag = (tag: string) => jsonWhere([{ type: 'startsWith', attribute: 'mpn', value: `${tag}:` }]);
const ids = (rows: unknown[] | undefined) => (rows as Row[]).map((r) => r.id);
const ascIds = (rows: Row[]) => rows.map((r) => r.id).sort();

// Lower-case values only, so that every database orders them the same way. Brands are created
// charlie, alpha, bravo: their id order is not their name order.
const BRANDS = ['charlie', 'alpha', 'bravo'];
const PRODUCTS = [
  { name: 'p-e', sku: 's-3', description: 'd-b', price: 9.5, quantity: 2, isActive: true, releaseDate: '2024-03-01', availableAt: '2024-03-01 10:00:00', color: 'red', brand: 'alpha' },
  { name: 'p-b', sku: 's-1', description: 'd-a', price: 20, quantity: 1, isActive: false, releaseDate: '2023-12-31', availableAt: '2024-01-01 00:00:00', color: 'blue', brand: 'charlie' },
  { name: 'p-d', sku: 's-5', description: 'd-c', price: 1.25, quantity: 2, isActive: true, releaseDate: '2024-01-15', availableAt: '2023-06-30 23:59:59', color: 'green', brand: 'bravo' },
  { name: 'p-a', sku: 's-2', description: 'd-b', price: 100, quantity: 3, isActive: false, releaseDate: '2025-07-04', availableAt: '2025-01-01 12:00:00', color: 'red', brand: 'alpha' },
  { name: 'p-c', sku: 's-4', description: 'd-a', price: 9.5, quantity: 1, isActive: true, releaseDate: '2024-03-01', availableAt: '2024-03-01 09:59:59', color: 'blue', brand: 'charlie' },
  { name: 'p-f', sku: 's-6', description: 'd-c', price: 0, quantity: 2, isActive: true, releaseDate: '2022-02-02', availableAt: '2030-12-31 23:59:59', color: 'green', brand: 'bravo' },
];
const SORTABLE = ['name', 'sku', 'description', 'price', 'quantity', 'isActive', 'releaseDate', 'availableAt', 'color', 'brand'];
const CATEGORIES = 205;

describe.each(TEST_DBS)('list parameters on %s', (kind) => {
  let t: TestApi;
  const brandIds: Record<string, string> = {};
  const sorted: Row[] = []; // the PRODUCTS as created, with their ids
  const paged: string[] = []; // ids of records with equal sort values, in creation order

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    for (const name of BRANDS) brandIds[name] = (await t.post('/api/Brand', { name }).expect(200)).body.id;
    for (const [i, { brand, ...p }] of PRODUCTS.entries()) {
      const res = await t.post('/api/Product', { ...p, mpn: `sort:${i}`, brandId: brandIds[brand] }).expect(200);
      sorted.push({ ...p, brand, id: res.body.id });
    }
    for (let i = 0; i < 9; i++) {
      paged.push((await t.post('/api/Product', { name: `same-${i}`, mpn: `page:${i}`, quantity: 7, price: 1 }).expect(200)).body.id);
    }
    for (let i = 0; i < CATEGORIES; i += 15) {
      const batch = Array.from({ length: Math.min(15, CATEGORIES - i) }, (_, j) => i + j);
      await Promise.all(batch.map((n) => t.post('/api/Category', { name: `cat-${n}`, code: `c${n}` }).expect(200)));
    }
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (gen, base) => {
    it('orders by id ascending by default: creation order, since ids are time-ordered', async () => {
      const body = await list(t, `${base}/Product?${byTag('sort')}`);
      expect(ids(body.list)).toEqual(sorted.map((r) => r.id));
      expect(ids(body.list)).toEqual(ascIds(sorted));
      const desc = await list(t, `${base}/Product?asc=false&${byTag('sort')}`);
      expect(ids(desc.list)).toEqual(ascIds(sorted).reverse());
    });

    it.each(SORTABLE)('sorts by %s in both directions, id breaking ties', async (field) => {
      const key = (r: Row) => r[field] as string | number | boolean;
      const expected = [...sorted].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : 1));
      const asc = await list(t, `${base}/Product?sortBy=${field}&${byTag('sort')}`);
      expect(ids(asc.list)).toEqual(ids(expected));
      expect((await list(t, `${base}/Product?sortBy=${field}&asc=true&${byTag('sort')}`)).list).toEqual(asc.list);
      const desc = await list(t, `${base}/Product?sortBy=${field}&asc=false&${byTag('sort')}`);
      expect(ids(desc.list)).toEqual(ids(expected).reverse());
    });

    it('sorts by a link through the name of the linked record, not its id', async () => {
      const body = await list(t, `${base}/Product?sortBy=brand&select=name,brand&${byTag('sort')}`);
      const names = (body.list as Row[]).map((r) => r.brandName);
      expect(names).toEqual(['alpha', 'alpha', 'bravo', 'bravo', 'charlie', 'charlie']);
      expect((body.list as Row[]).map((r) => r.brandId)).toEqual(names.map((n) => brandIds[n as string]));
      // By id the order would differ: charlie was created first.
      expect(brandIds.charlie < brandIds.alpha).toBe(true);
    });

    it('sorts by createdAt with ties broken by id', async () => {
      const body = await list(t, `${base}/Product?sortBy=createdAt&asc=false&maxSize=1000`);
      const rows = body.list as Row[];
      for (let i = 1; i < rows.length; i++) {
        const [a, b] = [rows[i - 1], rows[i]];
        expect(a.createdAt as string >= (b.createdAt as string)).toBe(true);
        if (a.createdAt === b.createdAt) expect(a.id > b.id).toBe(true);
      }
    });

    it.each(['nope', 'labels', 'specs', 'categories', 'categoriesIds'])('refuses sortBy=%s', async (field) => {
      expectQueryError(await t.get(`${base}/Product?sortBy=${field}`));
    });

    it('pages through records with equal sort values without duplicates or misses', async () => {
      for (const [sortBy, asc] of [['quantity', 'true'], ['quantity', 'false'], ['price', 'true'], ['', 'true']]) {
        const seen: string[] = [];
        for (let offset = 0; offset < 12; offset += 2) {
          const body = await list(t, `${base}/Product?sortBy=${sortBy}&asc=${asc}&offset=${offset}&maxSize=2&${byTag('page')}`);
          expect(body.total).toBe(9);
          expect(body.list!.length).toBe(Math.max(0, Math.min(2, 9 - offset)));
          seen.push(...ids(body.list));
        }
        const expected = [...paged].sort();
        expect(seen).toEqual(asc === 'true' ? expected : expected.reverse());
      }
    });

    it('applies maxSize: default 200, at most 1000', async () => {
      const def = await list(t, `${base}/Category`);
      expect(def.total).toBe(CATEGORIES);
      expect(def.list).toHaveLength(200);
      const all = await list(t, `${base}/Category?maxSize=1000`);
      expect(all.list).toHaveLength(CATEGORIES);
      expect(ids(def.list)).toEqual(ids(all.list).slice(0, 200));
      expect(ids(all.list)).toEqual([...ids(all.list)].sort());
      expect((await list(t, `${base}/Category?maxSize=3`)).list).toHaveLength(3);
      const zero = await list(t, `${base}/Category?maxSize=0`);
      expect(zero).toEqual({ total: CATEGORIES, list: [] });
    });

    it('applies offset', async () => {
      const all = ids((await list(t, `${base}/Category?maxSize=1000`)).list);
      expect(ids((await list(t, `${base}/Category?offset=2&maxSize=3`)).list)).toEqual(all.slice(2, 5));
      expect(ids((await list(t, `${base}/Category?offset=200`)).list)).toEqual(all.slice(200));
      expect(ids((await list(t, `${base}/Category?offset=0&maxSize=1`)).list)).toEqual(all.slice(0, 1));
      const past = await list(t, `${base}/Category?offset=${CATEGORIES}`);
      expect(past).toEqual({ total: CATEGORIES, list: [] });
    });

    it.each([
      'maxSize=1001', 'maxSize=5000', 'maxSize=-1', 'maxSize=1.5', 'maxSize=abc', 'maxSize=', 'maxSize=1e2',
      'maxSize[]=5', 'offset=-1', 'offset=1.5', 'offset=abc', 'offset=99999999999999999999', 'asc=maybe',
      'totalOnly=yes', 'collectionOnly=2', 'sortBy[]=name', 'select[x]=name', 'totalOnly=true&collectionOnly=true',
      // The names AtroCore clients also send (orderBy, order) are refused alike, never ignored.
      'orderBy[]=name', 'orderBy[a]=name', 'order[]=desc', 'order=up',
    ])('answers 400 for %s', async (query) => {
      expectQueryError(await t.get(`${base}/Category?${query}`));
    });

    it('selects fields: id always, a link as <link>Id and <link>Name', async () => {
      const keys = async (q: string) => {
        const body = await list(t, `${base}/Product?${q}&${byTag('sort')}`);
        expect(body.list).toHaveLength(PRODUCTS.length);
        return [...new Set((body.list as Row[]).map((r) => Object.keys(r).sort().join(',')))];
      };
      expect(await keys('select=name,sku')).toEqual(['id,name,sku']);
      expect(await keys('select=name,%20price')).toEqual(['id,name,price']);
      expect(await keys('select[]=quantity&select[]=color')).toEqual(['color,id,quantity']);
      expect(await keys('select=id')).toEqual(['id']);
      expect(await keys('select=brand')).toEqual(['brandId,brandName,id']);
      expect(await keys('select=brandId')).toEqual(['brandId,brandName,id']);
      expect(await keys('select=categories')).toEqual(['categoriesIds,categoriesNames,id']);
      const body = await list(t, `${base}/Product?select=brand&sortBy=name&${byTag('sort')}`);
      const first = body.list![0] as Row;
      const source = sorted.find((r) => r.id === first.id) as Row;
      expect(first).toEqual({ id: source.id, brandId: brandIds[source.brand as string], brandName: source.brand });
    });

    it.each(['nope', 'name,nope', 'brand.name', 'Name'])('refuses select=%s', async (select) => {
      const res = await t.get(`${base}/Product?select=${encodeURIComponent(select)}`);
      expectQueryError(res);
      expect(res.body.error.details).toMatchObject({ field: expect.any(String) });
    });

    it('counts only matching records, and totalOnly / collectionOnly return one part', async () => {
      const where = jsonWhere([
        { type: 'startsWith', attribute: 'mpn', value: 'sort:' },
        { type: 'equals', attribute: 'quantity', value: 2 },
      ]);
      const page = await list(t, `${base}/Product?maxSize=1&${where}`);
      expect(page.total).toBe(3);
      expect(page.list).toHaveLength(1);
      expect(await list(t, `${base}/Product?totalOnly=true&${where}`)).toEqual({ total: 3 });
      const collection = await list(t, `${base}/Product?collectionOnly=true&${where}`);
      expect(Object.keys(collection)).toEqual(['list']);
      expect(ids(collection.list)).toEqual(ascIds(sorted.filter((r) => r.quantity === 2)));
      expect(Object.keys(await list(t, `${base}/Product?collectionOnly=false&${where}`)).sort()).toEqual(['list', 'total']);
      expect(await list(t, `${base}/Category?totalOnly=true`)).toEqual({ total: CATEGORIES });
      expect(await list(t, `${base}/Product?totalOnly=true&${byTag('nothing-has-this')}`)).toEqual({ total: 0 });
    });

    it('never shows soft-deleted records, in lists, counts, filters or sorts', async () => {
      const tag = `deleted-${gen}`;
      const made: string[] = [];
      for (const name of ['sd-1', 'sd-2', 'sd-3']) {
        made.push((await t.post(`${base}/Product`, { name, mpn: `${tag}:${name}`, quantity: 1 }).expect(200)).body.id);
      }
      await t.del(`${base}/Product/${made[1]}`).expect(200);
      const live = [made[0], made[2]];
      expect(ids((await list(t, `${base}/Product?${byTag(tag)}`)).list)).toEqual(live);
      expect(await list(t, `${base}/Product?totalOnly=true&${byTag(tag)}`)).toEqual({ total: 2 });
      expect(ids((await list(t, `${base}/Product?sortBy=name&asc=false&${byTag(tag)}`)).list)).toEqual([made[2], made[0]]);
      const everything = await list(t, `${base}/Product?maxSize=1000`);
      expect(ids(everything.list)).not.toContain(made[1]);
      expect(everything.total).toBe(everything.list!.length);
      const byId = await list(t, `${base}/Product?${jsonWhere([{ type: 'in', attribute: 'id', value: made }])}`);
      expect(ids(byId.list)).toEqual(live);
      expect(byId.total).toBe(2);
      const paged2 = await list(t, `${base}/Product?maxSize=1&offset=1&${byTag(tag)}`);
      expect(paged2).toMatchObject({ total: 2, list: [{ id: made[2] }] });
    });
  });
});
