import { GENERATIONS, recordQueries, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/** The statements that write (and, on PostgreSQL, may read the answer back in the same statement). */
const writes = (sql: string[]) => sql.filter((s) => /^(begin|commit|update|insert|delete|with)\b/i.test(s));
/** The selects of rows of `table` sent after the last write (not those of multiple links, read after it in any case). */
const readsAfterWrite = (sql: string[], table: string) => {
  const last = sql.map((s) => /^(commit|update|insert|with)\b/i.test(s)).lastIndexOf(true);
  return sql.slice(last + 1).filter((s) => new RegExp(`^select .* from [\`"]${table}[\`"]`, 'is').test(s));
};

describe.each(TEST_DBS)('the answer of a create or an update on %s', (kind) => {
  let t: TestApi;
  let brandId: string;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, auth: { tokenCacheSeconds: 3600 } });
    brandId = (await t.post('/api/Brand', { name: 'Acme' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('is the record as a read then shows it, with its version; on PostgreSQL read by the statement that writes it (generation %s)', async (_g, base) => {
    const body = {
      name: 'Every type',
      sku: `answers${base.replaceAll('/', '-')}`,
      description: 'text',
      price: 12.5,
      quantity: 3,
      isActive: false,
      releaseDate: '2026-01-02',
      availableAt: '2026-01-02 03:04:05',
      color: 'red',
      labels: ['new', 'eco'],
      specs: { a: [1, 'two'], b: null },
      brandId,
    };
    let created: { body: Record<string, unknown>; headers: Record<string, string> } | undefined;
    const createSql = await recordQueries(t, async () => void (created = await t.post(`${base}/Product`, body).expect(200)));
    const id = created!.body.id as string;
    const read = await t.get(`${base}/Product/${id}`).expect(200);
    expect(created!.body).toEqual(read.body);
    expect(created!.body).toMatchObject({ ...body, brandName: 'Acme', createdByName: expect.any(String), modifiedByName: expect.any(String) });
    expect(created!.headers.etag).toBe(read.headers.etag);

    let updated: { body: Record<string, unknown>; headers: Record<string, string> } | undefined;
    const updateSql = await recordQueries(t, async () => void (updated = await t.patch(`${base}/Product/${id}`, { price: 13.25, labels: ['sale'] }).expect(200)));
    const again = await t.get(`${base}/Product/${id}`).expect(200);
    expect(updated!.body).toEqual(again.body);
    expect(updated!.body).toMatchObject({ price: 13.25, labels: ['sale'], brandName: 'Acme' });
    expect(updated!.headers.etag).toBe(again.headers.etag);
    expect(updated!.headers.etag).not.toBe(read.headers.etag);

    if (kind === 'postgres') {
      for (const sql of [createSql, updateSql]) {
        expect(writes(sql)).toEqual([expect.stringMatching(/^with w as \((insert|update) .* from "w" as "product" left join "brand"/is)]);
        expect(readsAfterWrite(sql, 'product')).toEqual([]);
      }
    } else {
      // SQLite writes in a transaction and reads the record after it.
      for (const sql of [createSql, updateSql]) expect(readsAfterWrite(sql, 'product')).toHaveLength(1);
    }
  });

  it('reads a record that links to its own entity type after the write, so that a link to itself shows the name just written', async () => {
    const id = (await t.post('/api/Category', { name: 'Before', code: 'self-link' }).expect(200)).body.id;
    await t.patch(`/api/Category/${id}`, { parentId: id }).expect(200);
    let answer: Record<string, unknown> | undefined;
    const sql = await recordQueries(t, async () => void (answer = (await t.patch(`/api/Category/${id}`, { name: 'After' }).expect(200)).body));
    expect(answer).toMatchObject({ name: 'After', parentId: id, parentName: 'After' });
    expect(readsAfterWrite(sql, 'category')).toHaveLength(1);
  });

  it('answers an update that changes nothing with the record as stored, at its version', async () => {
    const id = (await t.post('/api/Product', { name: 'Same', price: 1 }).expect(200)).body.id;
    const before = await t.get(`/api/Product/${id}`).expect(200);
    const { body, headers } = await t.patch(`/api/Product/${id}`, { price: 1 }).expect(200);
    expect(body).toEqual(before.body);
    expect(headers.etag).toBe(before.headers.etag);
  });
});

describe.each(TEST_DBS)('the single links of a create on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, auth: { tokenCacheSeconds: 3600 } });
  });
  afterAll(() => t.close());

  const changesOf = async (id: string) => (await t.api.database.knex('record_change').where({ record_id: id })).length;

  it('are judged by the statement that inserts the record on PostgreSQL: a live brand costs no statement before it', async () => {
    const brandId = (await t.post('/api/Brand', { name: 'Guarded' }).expect(200)).body.id;
    await t.post('/api/Product', { name: 'Warm', brandId }).expect(200);
    let id = '';
    const sql = await recordQueries(t, async () => void (id = (await t.post('/api/Product', { name: 'Linked', brandId }).expect(200)).body.id));
    expect((await t.get(`/api/Product/${id}`).expect(200)).body).toMatchObject({ name: 'Linked', brandId, brandName: 'Guarded' });
    if (kind === 'postgres') {
      // The insert is the first statement; only the multiple links of the answer are read after it.
      expect(sql[0]).toMatch(/^with w as \(insert into "product" .* where exists \(select 1 from "brand" where "id" = \$\d+ and "deleted" = \$\d+ for key share\) returning \*\)/is);
      expect(sql.slice(1).filter((s) => !/ from "category_products__product_categories" /.test(s))).toEqual([]);
    } else {
      expect(sql.findIndex((s) => /from `brand`/.test(s))).toBeLessThan(sql.findIndex((s) => /^insert into `product`/i.test(s)));
    }
  });

  it.each(GENERATIONS)('refuse a brand that does not exist or is deleted with the 400 of every write, storing neither the record nor a change (generation %s)', async (g, base) => {
    const deleted = (await t.post(`${base}/Brand`, { name: `Gone ${g}` }).expect(200)).body.id;
    await t.del(`${base}/Brand/${deleted}`).expect(200);
    for (const brandId of ['no-such-brand', deleted]) {
      const id = `refused-${g}-${brandId}`.slice(0, 64);
      const res = await t.post(`${base}/Product`, { id, name: 'Refused', brandId }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message: `Brand '${brandId}' not found (brandId)` });
      await t.get(`${base}/Product/${id}`).expect(404);
      expect(await changesOf(id)).toBe(0);
    }
    // The same body with a live brand then creates the record, with its change.
    const live = (await t.post(`${base}/Brand`, { name: `Back ${g}` }).expect(200)).body.id;
    await t.post(`${base}/Product`, { id: `refused-then-made-${g}`, name: 'Made', brandId: live }).expect(200);
    expect(await changesOf(`refused-then-made-${g}`)).toBe(1);
  });
});
