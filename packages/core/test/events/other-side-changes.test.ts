import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { stampAfter } from '../../../../test/support/stamps';
import { userWithRole, type UserClient } from '../../../../test/support/users';

type Change = { action: string; diff: Record<string, { was: unknown; became: unknown }> };

/**
 * A many-to-many link is stored once, as a pair, for both of its records: a write from either side
 * changes both. The record of the other side gets a new version and its own change (CONTRACT §16),
 * whichever write route set the pair.
 */
describe.each(TEST_DBS)('the other side of a many-to-many link on %s', (kind) => {
  let t: TestApi;
  let n = 0;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  const category = async () => (await t.post('/api/Category', { name: `Side ${++n}`, code: `side-${n}` }).expect(200)).body.id as string;
  const product = async (body: Record<string, unknown> = {}) => (await t.post('/api/Product', { name: `Side product ${++n}`, ...body }).expect(200)).body.id as string;
  /** The changes of a record, oldest first. */
  const changesOf = async (entity: string, id: string): Promise<Change[]> => [...(await t.get(`/api/v1/${entity}/${id}/stream?maxSize=200`).expect(200)).body.list].reverse();
  const etagOf = async (entity: string, id: string) => (await t.get(`/api/${entity}/${id}`).expect(200)).headers.etag as string;
  const sorted = (ids: unknown) => [...(ids as string[])].sort();

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('a link route of one side moves the version of the other and logs its Relate, then its Unrelate', async () => {
      const [c, p] = [await category(), await product()];
      const etag = await etagOf('Product', p);
      expect(await t.post(`${base}/Category/${c}/products`, { id: p }).expect(200)).toMatchObject({ body: true });
      const linked = await t.get(`/api/Product/${p}`).set('If-None-Match', etag).expect(200);
      expect(linked.body.categoriesIds).toEqual([c]);
      expect(linked.headers.etag).not.toBe(etag);
      // The version is the one that If-Match checks.
      await t.patch(`/api/Product/${p}`).set('If-Match', etag).send({ price: 1 }).expect(412);
      await t.del(`${base}/Category/${c}/products?id=${p}`).expect(200);
      expect(await changesOf('Product', p)).toEqual([
        expect.objectContaining({ action: 'Create' }),
        expect.objectContaining({ action: 'Relate', diff: { categoriesIds: { was: [], became: [c] } } }),
        expect.objectContaining({ action: 'Unrelate', diff: { categoriesIds: { was: [c], became: [] } } }),
      ]);
    });

    it('an update of one side logs the list of each record of the other side that gained or lost it', async () => {
      const [c1, c2, c3] = [await category(), await category(), await category()];
      const other = await product({ categoriesIds: [c2] });
      const p = await product({ categoriesIds: [c1] });
      const before = await etagOf('Category', c3);
      await t.patch(`${base}/Product/${p}`, { categoriesIds: [c2, c3] }).expect(200);
      expect(await etagOf('Category', c3)).not.toBe(before);
      const [of1, of2, of3] = [await changesOf('Category', c1), await changesOf('Category', c2), await changesOf('Category', c3)];
      expect(of1.map((x) => x.action)).toEqual(['Create', 'Relate', 'Unrelate']);
      expect(of1[2].diff).toEqual({ productsIds: { was: [p], became: [] } });
      expect(of2.map((x) => x.action)).toEqual(['Create', 'Relate', 'Relate']);
      expect(sorted(of2[2].diff.productsIds.was)).toEqual([other]);
      expect(sorted(of2[2].diff.productsIds.became)).toEqual(sorted([other, p]));
      expect(of3.at(-1)).toMatchObject({ action: 'Relate', diff: { productsIds: { was: [], became: [p] } } });
    });

    it('a batch upsert logs one change per record of the other side, whatever the number of items naming it', async () => {
      const [c1, c2] = [await category(), await category()];
      const moving = await product({ categoriesIds: [c1] });
      const res = await t
        .post(`${base}/upsert`, [
          { entity: 'Product', payload: { name: `Batch ${n}a`, categoriesIds: [c2] } },
          { entity: 'Product', payload: { name: `Batch ${n}b`, categoriesIds: [c2] } },
          { entity: 'Product', payload: { id: moving, categoriesIds: [c2] } },
        ])
        .expect(200);
      const ids = (res.body as { status: string; entity: { id: string } }[]).map((r) => {
        expect(r.status).not.toBe('Failed');
        return r.entity.id;
      });
      const [of1, of2] = [await changesOf('Category', c1), await changesOf('Category', c2)];
      expect(of1.at(-1)).toMatchObject({ action: 'Unrelate', diff: { productsIds: { was: [moving], became: [] } } });
      expect(of2.map((x) => x.action)).toEqual(['Create', 'Relate']);
      expect(sorted(of2[1].diff.productsIds.became)).toEqual(sorted(ids));
    });

    it('records who changed the list of the other side, and when: the write, by every route', async () => {
      const full = { create: true, read: 'all', edit: 'all', delete: 'all' };
      const editor: UserClient = await userWithRole(t, { scopes: { Category: full, Product: full } });
      const [c1, c2, c3, c4] = [await category(), await category(), await category(), await category()];
      const p = await product();
      // Each write, sent by the editor from the product's side, changes the list of one category.
      const writes: [string, () => PromiseLike<{ body: unknown }>][] = [
        [c1, () => editor.post(`${base}/Product/${p}/categories`, { id: c1 }).expect(200, 'true')],
        [c2, () => editor.patch(`${base}/Product/${p}`, { categoriesIds: [c1, c2] }).expect(200)],
        [c3, () => editor.post(`${base}/upsert`, [{ entity: 'Product', payload: { id: p, categoriesIds: [c1, c2, c3] } }]).expect(200)],
        [c4, () => editor.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [p], addLinks: { categories: [c4] } }).expect(200)],
      ];
      for (const [c, write] of writes) {
        const after = await stampAfter(t, 'Category', c, { by: editor.user.id, write });
        // The write that changed the product changed the category, at the same time, which its change tells too.
        expect(after.modifiedAt).toBe((await t.get(`/api/Product/${p}`).expect(200)).body.modifiedAt);
        expect((await t.get(`/api/v1/Category/${c}/stream?maxSize=1`).expect(200)).body.list[0]).toMatchObject({ action: 'Relate', createdAt: after.modifiedAt });
      }
      expect(sorted((await t.get(`/api/Product/${p}`).expect(200)).body.categoriesIds)).toEqual(sorted([c1, c2, c3, c4]));
    });

    it('entityMassUpdate with addLinks relates the record of the other side once, with every record it gained', async () => {
      const c = await category();
      const [p1, p2] = [await product(), await product()];
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [p1, p2], addLinks: { categories: [c] } }).expect(200);
      const of = await changesOf('Category', c);
      expect(of.map((x) => x.action)).toEqual(['Create', 'Relate']);
      expect(of[1].diff.productsIds.was).toEqual([]);
      expect(sorted(of[1].diff.productsIds.became)).toEqual(sorted([p1, p2]));
    });
  });
});
