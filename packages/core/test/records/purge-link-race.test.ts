import type { Knex } from 'knex';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

jest.setTimeout(60_000);

const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A write that links to a record while a permanent delete removes it (CONTRACT §5, §16): either
 * the write commits first and the delete detaches the new link (an `Unrelate` change), or the
 * delete commits first and the write is 400 `CORE_INVALID_LINK`. Never a link to a record that no
 * longer exists. Made certain on PostgreSQL by another client of the database, whose open
 * transaction holds one of the two requests at a chosen point. SQLite runs one write at a time.
 */
describePg('a link written while its target is removed for good, on postgres', () => {
  let t: TestApi;
  let knex: Knex;
  beforeAll(async () => {
    t = await startTestApi('postgres', { entities: testEntities });
    knex = t.api.database.knex;
  });
  afterAll(() => t.close());

  /**
   * Waits until `count` statements of this database wait for a lock, or 3 s have passed (a request
   * that does not wait, as when a write holds nothing, has run on meanwhile: what it stored shows),
   * or `until` settled.
   */
  async function lockWaiters(count: number, until?: Promise<unknown>): Promise<void> {
    let settled = false;
    void until?.finally(() => (settled = true));
    for (let i = 0; i < 120 && !settled; i++) {
      const { rows } = await knex.raw("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
      if (rows[0].n >= count) return;
      await sleep(25);
    }
  }

  /** Links that name no stored record, in the product table and the categories' join table. */
  async function dangling(): Promise<unknown[]> {
    const brands = await knex('product').select('product.id').leftJoin('brand', 'brand.id', 'product.brand_id').whereNotNull('product.brand_id').whereNull('brand.id');
    const joins = (await knex.raw("select table_name from information_schema.tables where table_name like 'category_products%' or table_name like 'product_categories%'")).rows as { table_name: string }[];
    const pairs: unknown[] = [];
    for (const { table_name: table } of joins) {
      const columns = (await knex.raw('select column_name from information_schema.columns where table_name = ?', [table])).rows.map((r: { column_name: string }) => r.column_name);
      const categoryColumn = columns.find((c: string) => c.startsWith('category')) as string;
      pairs.push(...(await knex(table).select('*').whereNotIn(categoryColumn, knex('category').select('id'))));
    }
    return [...brands, ...pairs];
  }

  const streamOf = async (base: string, entity: string, id: string) =>
    ((await t.get(base === '/api' ? `/api/entityStream?entityName=${entity}&id=${id}` : `/api/v1/${entity}/${id}/stream`).expect(200)).body.list as { action: string; diff: Record<string, { was: unknown; became: unknown }> }[]);

  it.each(GENERATIONS)('a create that linked first commits, and the delete detaches it with an Unrelate (generation %s)', async (g, base) => {
    const brand = (await t.post(`${base}/Brand`, { name: `Removed first ${g}` }).expect(200)).body.id as string;
    const sku = `RACE-CREATE-${g}`;
    // Another client holds a new product with this sku: the create waits at its insert, after its check of the brand.
    // A stored row to copy every column from.
    const template = await knex('product').where({ id: (await t.post(`${base}/Product`, { name: 'template' }).expect(200)).body.id }).first();
    const other = await knex.transaction();
    try {
      await other('product').insert({ ...template, id: `holder-${g}`, name: 'holder', sku });
      const created = t.post(`${base}/Product`, { name: 'linked', sku, brandId: brand }).then((res) => res);
      await lockWaiters(1);
      const removed = t.del(`${base}/Brand/${brand}`).set('permanently', 'true').then((res) => res);
      await lockWaiters(2);
      await other.rollback();
      const [create, remove] = [await created, await removed];
      expect([create.status, remove.status]).toEqual([200, 200]);
      const product = (await t.get(`${base}/Product/${create.body.id}`).expect(200)).body;
      expect(product).toMatchObject({ brandId: null, brandName: null });
      expect((await streamOf(base, 'Product', create.body.id)).map((c) => c.action)).toEqual(['Unrelate', 'Create']);
      expect(await dangling()).toEqual([]);
    } finally {
      if (!other.isCompleted()) await other.rollback();
    }
  });

  it.each(GENERATIONS)('a link written once the delete holds its target is 400, single and multiple links (generation %s)', async (g, base) => {
    for (const link of ['brand', 'categories'] as const) {
      const target =
        link === 'brand'
          ? ((await t.post(`${base}/Brand`, { name: `Removed ${g}` }).expect(200)).body.id as string)
          : ((await t.post(`${base}/Category`, { name: `Removed ${g}`, code: `removed-${g}` }).expect(200)).body.id as string);
      const linkedBody = link === 'brand' ? { brandId: target } : { categoriesIds: [target] };
      // A product linking the target, held by another client: the delete locks the target, then waits for it.
      const held = (await t.post(`${base}/Product`, { name: 'held', ...linkedBody }).expect(200)).body.id as string;
      const writer = (await t.post(`${base}/Product`, { name: 'writer' }).expect(200)).body.id as string;
      const other = await knex.transaction();
      try {
        await other('product').select('id').where({ id: held }).forUpdate();
        const removed = t.del(`${base}/${link === 'brand' ? 'Brand' : 'Category'}/${target}`).set('permanently', 'true').then((res) => res);
        await lockWaiters(1);
        const writes = [
          t.patch(`${base}/Product/${writer}`, linkedBody).then((res) => res),
          t.post(`${base}/Product/${writer}/${link}`, { id: target }).then((res) => res),
          t.post(`${base}/Product`, { name: 'new', ...linkedBody }).then((res) => res),
        ];
        await lockWaiters(4);
        await other.commit();
        expect((await removed).status).toBe(200);
        for (const write of writes) expect([link, (await write).status, (await write).body.error?.code]).toEqual([link, 400, 'CORE_INVALID_LINK']);
        expect((await t.get(`${base}/Product/${held}`).expect(200)).body).toMatchObject(link === 'brand' ? { brandId: null } : { categoriesIds: [] });
        expect(await dangling()).toEqual([]);
      } finally {
        if (!other.isCompleted()) await other.rollback();
      }
    }
  });
  it.each(GENERATIONS)('a pair written from the other side while the delete waits is removed by it, and a new record with its id starts unlinked (generation %s)', async (g, base) => {
    const product = `purged-${g}`;
    await t.post(`${base}/Product`, { id: product, name: 'purged' }).expect(200);
    const category = (await t.post(`${base}/Category`, { name: `Linking ${g}`, code: `linking-${g}` }).expect(200)).body.id as string;
    // A category holding the product, held by another client: the delete waits for it (categories are locked before products).
    const holder = (await t.post(`${base}/Category`, { name: `Holder ${g}`, code: `holder-${g}`, productsIds: [product] }).expect(200)).body.id as string;
    const other = await knex.transaction();
    try {
      await other('category').select('id').where({ id: holder }).forUpdate();
      const removed = t.del(`${base}/Product/${product}`).set('permanently', 'true').then((res) => res);
      await lockWaiters(1);
      const linked = t.post(`${base}/Category/${category}/products`, { id: product }).then((res) => res);
      // It goes through (the delete holds no product yet), or waits for the delete.
      await lockWaiters(2, linked);
      await other.commit();
      expect([(await removed).status, (await linked).status]).toEqual([200, 200]);
      // The pair went in first; the delete then found it, removed it and logged its loss.
      expect((await t.get(`${base}/Category/${category}`).expect(200)).body.productsIds).toEqual([]);
      const [last] = await streamOf(base, 'Category', category);
      expect(last).toMatchObject({ action: 'Unrelate', diff: { productsIds: { was: [product], became: [] } } });
      expect(await dangling()).toEqual([]);
      await t.post(`${base}/Product`, { id: product, name: 'new with the id' }).expect(200);
      expect((await t.get(`${base}/Product/${product}`).expect(200)).body.categoriesIds).toEqual([]);
    } finally {
      if (!other.isCompleted()) await other.rollback();
    }
  });
});
