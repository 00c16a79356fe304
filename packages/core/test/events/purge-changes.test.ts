import { defineEntity } from '@entity-records/core';
import { countQueries, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { stampAfter } from '../../../../test/support/stamps';
import { changeReaders, type ChangeReaders } from '../../../../test/support/change-readers';
import { userWithRole } from '../../../../test/support/users';

jest.setTimeout(60_000);

/** Links a brand three ways at once: a permanent delete of the brand changes all three in one change. */
const Listing = defineEntity({
  name: 'Listing',
  fields: {
    name: { type: 'varchar', required: true },
    brand: { type: 'link', entity: 'Brand' },
    backupBrand: { type: 'link', entity: 'Brand' },
    brands: { type: 'linkMultiple', entity: 'Brand' },
  },
});

/**
 * A permanent delete changes the records that linked the deleted one: their single links are
 * cleared and the pairs of their many-to-many links removed. Each such live record gets a new
 * version and one `Unrelate` change of the link fields that changed (CONTRACT §16), which its
 * stream, server-sent events (replay too) and its ETag show.
 */
describe.each(TEST_DBS)('records that linked one deleted permanently on %s', (kind) => {
  let t: TestApi;
  let n = 0;
  let readers: ChangeReaders;

  beforeAll(async () => {
    // Tokens stay cached (SQLite's cache lasts half a second): a reload would fall into a statement count below.
    t = await startTestApi(kind, { entities: [...testEntities, Listing], auth: { tokenCacheSeconds: 3600 } });
    readers = await changeReaders(t);
  });
  afterEach(() => readers.closeClients());
  afterAll(async () => {
    await readers.close();
    await t.close();
  });

  const brand = async () => (await t.post('/api/Brand', { name: `Purged brand ${++n}` }).expect(200)).body.id as string;
  const category = async (body: Record<string, unknown> = {}) => (await t.post('/api/Category', { name: `Purged cat ${++n}`, code: `purge-${n}`, ...body }).expect(200)).body.id as string;
  const product = async (body: Record<string, unknown> = {}) => (await t.post('/api/Product', { name: `Purged product ${++n}`, ...body }).expect(200)).body.id as string;
  const etagOf = async (entity: string, id: string) => (await t.get(`/api/${entity}/${id}`).expect(200)).headers.etag as string;
  const purge = (base: string, entity: string, id: string) => t.del(`${base}/${entity}/${id}`).set('permanently', 'true').expect(200);
  const sorted = (ids: unknown) => [...(ids as string[])].sort();

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('purging a brand clears brandId of its products: each moves its version and logs one Unrelate', async () => {
      const b = await brand();
      const [p1, p2] = [await product({ brandId: b }), await product({ brandId: b })];
      const binned = await product({ brandId: b });
      await t.del(`/api/Product/${binned}`).expect(200);
      const etags = [await etagOf('Product', p1), await etagOf('Product', p2)];
      const seq = await readers.seqOf(base, { id: p2, count: 1 });
      await purge(base, 'Brand', b);
      for (const [i, p] of [p1, p2].entries()) {
        const read = await t.get(`/api/Product/${p}`).set('If-None-Match', etags[i]).expect(200);
        expect(read.body.brandId).toBeNull();
        expect(read.headers.etag).not.toBe(etags[i]);
        await t.patch(`/api/Product/${p}`).set('If-Match', etags[i]).send({ price: 1 }).expect(412);
        expect(await readers.changesOf(base, 'Product', p)).toEqual([
          { action: 'Create', diff: expect.objectContaining({ brandId: { was: null, became: b } }) },
          { action: 'Unrelate', diff: { brandId: { was: b, became: null } } },
        ]);
      }
      const events = await readers.replayed(base, { seq, ids: [p1, p2], count: 2 });
      expect(events.map((e) => [e.recordId, e.action, e.diff])).toEqual([
        [p1, 'Unrelate', { brandId: { was: b, became: null } }],
        [p2, 'Unrelate', { brandId: { was: b, became: null } }],
      ]);
      // A record in the bin loses the link as well (nothing points at a removed record), with
      // neither a change nor a new version, as link writes treat records in the bin.
      await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [binned] }).expect(200);
      expect((await t.get(`/api/Product/${binned}`).expect(200)).body.brandId).toBeNull();
      expect((await readers.changesOf(base, 'Product', binned)).map((c) => c.action)).toEqual(['Create', 'Delete', 'Restore']);
    });

    it('purging a category removes it from its products (many-to-many): each moves its version and logs one Unrelate', async () => {
      const [c1, c2] = [await category(), await category()];
      const p = await product({ categoriesIds: [c1, c2] });
      const alone = await product({ categoriesIds: [c1] });
      const etag = await etagOf('Product', p);
      const seq = await readers.seqOf(base, { id: alone, count: 1 });
      await purge(base, 'Category', c1);
      const read = await t.get(`/api/Product/${p}`).expect(200);
      expect(read.body.categoriesIds).toEqual([c2]);
      expect(read.headers.etag).not.toBe(etag);
      const [ofP, ofAlone] = [await readers.changesOf(base, 'Product', p), await readers.changesOf(base, 'Product', alone)];
      expect(ofP.map((c) => c.action)).toEqual(['Create', 'Unrelate']);
      expect(sorted(ofP[1].diff.categoriesIds.was)).toEqual(sorted([c1, c2]));
      expect(ofP[1].diff).toEqual({ categoriesIds: { was: expect.any(Array), became: [c2] } });
      expect(ofAlone.at(-1)).toEqual({ action: 'Unrelate', diff: { categoriesIds: { was: [c1], became: [] } } });
      const events = await readers.replayed(base, { seq, ids: [p, alone], count: 2 });
      expect(events.map((e) => [e.recordId, e.action])).toEqual([
        [p, 'Unrelate'],
        [alone, 'Unrelate'],
      ]);
      // The category of the other side, still there, keeps its list as it was.
      expect((await readers.changesOf(base, 'Category', c2)).map((c) => c.action)).toEqual(['Create', 'Relate']);
    });

    it("purging a product changes the lists of its categories, not the brand's list that only mirrors the product's link", async () => {
      const b = await brand();
      const [c1, c2] = [await category(), await category()];
      const p = await product({ brandId: b, categoriesIds: [c1, c2] });
      const other = await product({ categoriesIds: [c1] });
      const etags = [await etagOf('Category', c1), await etagOf('Category', c2), await etagOf('Brand', b)];
      const seq = await readers.seqOf(base, { id: c1, count: 3 });
      await purge(base, 'Product', p);
      expect(await etagOf('Category', c1)).not.toBe(etags[0]);
      expect(await etagOf('Category', c2)).not.toBe(etags[1]);
      expect((await readers.changesOf(base, 'Category', c1)).slice(-1)).toEqual([{ action: 'Unrelate', diff: { productsIds: { was: expect.any(Array), became: [other] } } }]);
      expect(sorted((await readers.changesOf(base, 'Category', c1)).at(-1)?.diff.productsIds.was)).toEqual(sorted([p, other]));
      expect((await readers.changesOf(base, 'Category', c2)).slice(-1)).toEqual([{ action: 'Unrelate', diff: { productsIds: { was: [p], became: [] } } }]);
      const events = await readers.replayed(base, { seq, ids: [c1, c2], count: 2 });
      expect(events.map((e) => [e.recordId, e.action])).toEqual(
        [c1, c2].sort().map((c) => [c, 'Unrelate']),
      );
      // Brand.products is read from the products' brandId: nothing stored of the brand changed.
      expect(await etagOf('Brand', b)).toBe(etags[2]);
      expect((await readers.changesOf(base, 'Brand', b)).map((c) => c.action)).toEqual(['Create']);
    });

    it('records who changed the records that linked the purged one, and when: the delete, at its time', async () => {
      const full = { create: true, read: 'all', edit: 'all', delete: 'all' };
      const purger = await userWithRole(t, { scopes: { Brand: full, Category: full, Product: full } });
      const [b, c] = [await brand(), await category()];
      const [single, multiple] = [await product({ brandId: b }), await product({ categoriesIds: [c] })];
      for (const [id, entity, target] of [[single, 'Brand', b], [multiple, 'Category', c]]) {
        const purge = () => purger.del(`${base}/${entity}/${target}`).set('permanently', 'true').expect(200);
        const after = await stampAfter(t, 'Product', id, { by: purger.user.id, write: purge });
        // The change it logged tells the same time.
        expect((await t.get(`/api/v1/Product/${id}/stream?maxSize=1`).expect(200)).body.list[0]).toMatchObject({ action: 'Unrelate', createdAt: after.modifiedAt });
      }
    });

    it("purging the 'one' side of a one-to-many link (a parent category) clears the link of each child, with one Unrelate each", async () => {
      const parent = await category();
      const [k1, k2] = [await category({ parentId: parent }), await category({ parentId: parent })];
      const etag = await etagOf('Category', k1);
      await purge(base, 'Category', parent);
      expect((await t.get(`/api/Category/${k1}`).expect(200)).body.parentId).toBeNull();
      expect(await etagOf('Category', k1)).not.toBe(etag);
      for (const k of [k1, k2]) expect((await readers.changesOf(base, 'Category', k)).slice(1)).toEqual([{ action: 'Unrelate', diff: { parentId: { was: parent, became: null } } }]);
    });

    it('a record that linked the deleted one through several fields logs one Unrelate with each field', async () => {
      const [b, kept] = [await brand(), await brand()];
      const listing = (await t.post('/api/Listing', { name: `Listing ${++n}`, brandId: b, backupBrandId: b, brandsIds: [b, kept] }).expect(200)).body.id as string;
      const etag = await etagOf('Listing', listing);
      await purge(base, 'Brand', b);
      const read = await t.get(`/api/Listing/${listing}`).expect(200);
      expect(read.body).toMatchObject({ brandId: null, backupBrandId: null, brandsIds: [kept] });
      expect(Number(JSON.parse(read.headers.etag as string))).toBe(Number(JSON.parse(etag)) + 1);
      const changes = await readers.changesOf(base, 'Listing', listing);
      expect(changes.slice(1)).toEqual([
        {
          action: 'Unrelate',
          diff: { brandId: { was: b, became: null }, backupBrandId: { was: b, became: null }, brandsIds: { was: expect.any(Array), became: [kept] } },
        },
      ]);
      expect(sorted(changes[1].diff.brandsIds.was)).toEqual(sorted([b, kept]));
    });
  });

  it('purges of categories while their products are written from both sides keep each product at one version per change, without a failure', async () => {
    const cats = [await category(), await category(), await category(), await category()];
    const products = [];
    for (let i = 0; i < 6; i++) products.push(await product({ categoriesIds: cats }));
    const sent = [
      ...cats.slice(0, 2).map((c) => t.del(`/api/Category/${c}`).set('permanently', 'true')),
      ...products.map((p, i) => t.patch(`/api/Product/${p}`, { categoriesIds: i % 2 ? cats.slice(1) : [cats[0], cats[3]] })),
      t.post(`/api/Category/${cats[2]}/products`, { ids: products }),
      t.del(`/api/Category/${cats[3]}/products`).send({ ids: products }),
    ];
    const answers = await Promise.all(sent.map((r) => r.then((x) => x)));
    // A write of a link to a category purged meanwhile is refused as a link to no record; nothing fails.
    for (const a of answers) expect([[200], [400, 'CORE_INVALID_LINK']]).toContainEqual(a.status === 200 ? [200] : [a.status, a.body.error?.code]);
    for (const p of products) {
      const read = await t.get(`/api/Product/${p}`).expect(200);
      expect(read.body.categoriesIds).not.toContain(cats[0]);
      expect(read.body.categoriesIds).not.toContain(cats[1]);
      const { total } = (await t.get(`/api/v1/Product/${p}/stream`).expect(200)).body as { total: number };
      expect(Number(JSON.parse(read.headers.etag as string))).toBe(total);
    }
  });

  it('costs as many statements for a brand of 40 products as for one of 4', async () => {
    const cost = async (count: number) => {
      const b = await brand();
      const c = await category();
      for (let i = 0; i < count; i++) await product({ brandId: b, categoriesIds: [c] });
      const brandCost = await countQueries(t, () => purge('/api', 'Brand', b));
      const categoryCost = await countQueries(t, () => purge('/api', 'Category', c));
      return [brandCost, categoryCost];
    };
    await cost(1);
    expect(await cost(40)).toEqual(await cost(4));
  });
});
