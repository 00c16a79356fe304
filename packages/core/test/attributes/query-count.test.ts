import { countQueries, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, createWeight, FLAT, startAttributeApi } from './support';

describe.each(TEST_DBS)('queries per list page with attributes on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    // Tokens stay cached for the whole file: an expiry between warm-up and count would add queries.
    t = await startAttributeApi(kind, { auth: { tokenCacheSeconds: 3600 } });
    const { measureId } = await createWeight(t, 'weight');
    await createAttribute(t, { code: 'weight', type: 'float', measureId });
    await createAttribute(t, { code: 'title', type: 'varchar', isMultilang: true });
    await createAttribute(t, { code: 'maker', type: 'link', linkEntity: 'Brand' });
    await createAttribute(t, { code: 'shelf', type: 'link', linkEntity: 'Category' });
    await createAttribute(t, { code: 'sellers', type: 'linkMultiple', linkEntity: 'Brand' });
    const brands = [];
    for (let i = 0; i < 3; i++) brands.push((await t.post('/api/Brand', { name: `B${i}` }).expect(200)).body.id);
    const shelf = (await t.post('/api/Category', { name: 'Shelf', code: 'shelf' }).expect(200)).body.id;
    for (let i = 0; i < 60; i++) {
      const values = { weight: i, title: `T${i}`, titleDeDE: `D${i}`, makerId: brands[i % 3], shelfId: shelf, sellersIds: [brands[(i + 1) % 3]] };
      await t.post('/api/Product', { name: `P${i}`, ...values }).set(FLAT).expect(200);
    }
  });
  afterAll(() => t.close());

  async function queriesFor(path: string): Promise<number> {
    await t.get(path).set(FLAT).expect(200); // warm the token and role caches
    return countQueries(t, async () => {
      const res = await t.get(path).set(FLAT).expect(200);
      expect(res.body.list?.[0]?.attributesDefs ?? res.body.attributesDefs).toBeDefined();
    });
  }

  it('costs the same number of queries for 5 and 50 records with every attribute', async () => {
    const small = await queriesFor('/api/Product?maxSize=5&allAttributes=true');
    expect(await queriesFor('/api/Product?maxSize=50&allAttributes=true')).toBe(small);
    // count + rows + categories + attribute values + names of linked records (Brand and Category in one)
    expect(small).toBe(5);
  });

  it('adds one query to resolve attributes named in the request, whatever the page size', async () => {
    const query = 'attributes=weight,maker&sortBy=weight&where[0][type]=greaterThan&where[0][attribute]=weight&where[0][isAttribute]=true&where[0][value]=3';
    const small = await queriesFor(`/api/Product?maxSize=5&${query}`);
    expect(await queriesFor(`/api/v1/Product?maxSize=50&${query}`)).toBe(small);
    // The page of a filtered list not in id order counts the matches itself: no count statement.
    expect(small).toBe(5);
  });

  it('reads one record with its attributes in a constant number of queries', async () => {
    const id = (await t.get('/api/Product?maxSize=1').expect(200)).body.list[0].id;
    // record + categories + attribute values + linked names
    expect(await queriesFor(`/api/Product/${id}`)).toBe(4);
  });
});
