import { countQueries, recordQueries, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('queries per list page on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    // Tokens stay cached for the whole file: an expiry between warm-up and count would add queries.
    t = await startTestApi(kind, { entities: testEntities, auth: { tokenCacheSeconds: 3600 } });
    const brands = [];
    for (let i = 0; i < 5; i++) brands.push((await t.post('/api/Brand', { name: `B${i}` }).expect(200)).body.id);
    const cats = [];
    for (let i = 0; i < 5; i++) cats.push((await t.post('/api/Category', { name: `C${i}`, code: `c${i}` }).expect(200)).body.id);
    for (let i = 0; i < 60; i++) {
      await t.post('/api/Product', { name: `P${i}`, brandId: brands[i % 5], categoriesIds: [cats[i % 5], cats[(i + 1) % 5]] }).expect(200);
    }
  });
  afterAll(() => t.close());

  async function queriesFor(path: string): Promise<number> {
    await t.get(path).expect(200); // warm the token and role caches
    return countQueries(t, () => t.get(path).expect(200));
  }

  it('costs the same number of queries for 5 and 50 records with link names', async () => {
    const small = await queriesFor('/api/Product?maxSize=5');
    const large = await queriesFor('/api/Product?maxSize=50');
    expect(large).toBe(small);
    // count + rows (single-link names joined) + one per multiple link field
    expect(small).toBe(3);
    const hasMany = await queriesFor('/api/Brand?maxSize=5');
    expect(await queriesFor('/api/Brand?maxSize=50')).toBe(hasMany);
  });

  it('counts a filtered page that is not in id order with its rows, in one statement that sorts before joining names', async () => {
    const path = '/api/Product?where[0][type]=contains&where[0][attribute]=name&where[0][value]=p&sortBy=brand&asc=false&maxSize=5';
    await t.get(path).expect(200);
    const sql = await recordQueries(t, () => t.get(path).expect(200));
    // rows with the total + one per multiple link, no count statement
    expect(sql).toHaveLength(2);
    expect(sql[0]).toMatch(/count\(\*\) over \(\)/i);
    expect(sql[0]).toMatch(/^select .* from \(select .* limit \S+\) as .__page. inner join/i);
    const { body } = await t.get(path).expect(200);
    expect(body.total).toBe(60);
    expect(body.list.map((r: { brandName: string }) => r.brandName)).toEqual(['B4', 'B4', 'B4', 'B4', 'B4']);
    // Past the last page, the total comes from a count of its own.
    const past = await t.get(`${path}&offset=60`).expect(200);
    expect(past.body).toEqual({ total: 60, list: [] });
    // Without conditions the count stays a statement of its own (it reads no row twice).
    expect(await queriesFor('/api/Product?sortBy=price&maxSize=5')).toBe(3);
  });

  it('reads one record in a constant number of queries', async () => {
    const id = (await t.get('/api/Product?maxSize=1').expect(200)).body.list[0].id;
    expect(await queriesFor(`/api/Product/${id}`)).toBe(2);
  });

  it('reads only what an update compares: one simple field costs no join and no link query', async () => {
    const id = (await t.get('/api/Product?maxSize=1').expect(200)).body.list[0].id;
    await t.patch(`/api/Product/${id}`, { price: 1 }).expect(200);
    const sql = await recordQueries(t, () => t.patch(`/api/Product/${id}`, { price: 2 }).expect(200));
    const readsBefore = (statements: string[], write: RegExp) => {
      const at = statements.findIndex((s) => write.test(s));
      expect(at).toBeGreaterThan(0);
      return statements.slice(0, at).filter((s) => /^select /i.test(s));
    };
    if (kind === 'postgres') {
      // Compared by the database in the statement that writes: it reads the id, version and price.
      expect(sql[0]).toMatch(/^with o as \(select "id", "record_version", "price" from "product" where [^)]*\), w as \(update /i);
    } else {
      const reads = readsBefore(sql, /^(update|with) /i);
      expect(reads).toHaveLength(1);
      expect(reads[0]).not.toMatch(/ join /i);
    }
    // Multiple links the body names are read to compare them, the others are not. On PostgreSQL
    // the record's row and the rows of the records whose links change are locked first, one
    // statement per table, in one order (no deadlock between link writes from both sides).
    const withLinks = await recordQueries(t, () => t.patch(`/api/Product/${id}`, { categoriesIds: [] }).expect(200));
    const before = readsBefore(withLinks, /^(update|with|delete) /i);
    const locks = before.filter((s) => / for (no key )?update$/i.test(s));
    expect(before.length - locks.length).toBe(2);
    expect(locks.map((s) => /^select "id" from "(\w+)"/.exec(s)?.[1])).toEqual(kind === 'postgres' ? ['category', 'product'] : []);
  });

  it('writes simple columns and their change in one statement on PostgreSQL, one transaction on SQLite; links in a transaction', async () => {
    const id = (await t.get('/api/Product?maxSize=1').expect(200)).body.list[0].id;
    const statements = (sql: string[]) => sql.filter((s) => /^(begin|commit|rollback|update|insert|delete|with)\b/i.test(s));
    const simple = await recordQueries(t, () => t.patch(`/api/Product/${id}`, { price: 3, quantity: 4 }).expect(200));
    if (kind === 'postgres') expect(statements(simple)).toEqual([expect.stringMatching(/^with .*update "product".*insert into "record_change"/is)]);
    else expect(statements(simple)).toEqual([/^begin/i, /^update `product`/i, /^insert into `record_change`/i, /^commit/i].map((re) => expect.stringMatching(re)));
    const { brandId } = (await t.get(`/api/Product/${id}`).expect(200)).body;
    const other = (await t.get('/api/Brand?maxSize=2').expect(200)).body.list.find((b: { id: string }) => b.id !== brandId).id;
    const linked = await recordQueries(t, () => t.patch(`/api/Product/${id}`, { price: 5, brandId: other }).expect(200));
    expect(statements(linked)).toEqual([/^begin/i, /^update /i, /^insert into .record_change./i, /^commit/i].map((re) => expect.stringMatching(re)));
  });
});
