import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { linkTargets, streamOf } from '../../../../test/support/link-targets';

/**
 * The lists of ids that the link routes, `entityMassUpdate`'s `addLinks`/`removeLinks` and
 * `entityRestore` take are read alike (CONTRACT §15: a write one route refuses, no other route
 * accepts): a link write naming no record is 400 on every route, and an id named twice is one record.
 */
describe.each(TEST_DBS)('lists of ids on the link, mass update and restore routes on %s', (kind) => {
  let t: TestApi;
  let cats: string[];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    ({ cats } = await linkTargets(t, { prefix: 'E', categories: 2, brands: 0 }));
  });
  afterAll(() => t.close());

  const product = async () => (await t.post('/api/Product', { name: 'Lists', categoriesIds: [cats[0]] }).expect(200)).body.id as string;
  const state = async (id: string) => {
    const read = await t.get(`/api/Product/${id}`).expect(200);
    return { etag: read.headers.etag, categoriesIds: read.body.categoriesIds, changes: (await streamOf(t, 'Product', id)).length };
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('refuses an empty list of ids on the link routes and in addLinks and removeLinks alike, and changes nothing', async () => {
      const id = await product();
      const before = await state(id);
      const answers = [
        await t.post(`${base}/Product/${id}/categories`, { ids: [] }),
        await t.del(`${base}/Product/${id}/categories`).send({ ids: [] }),
        await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], addLinks: { categories: [] } }),
        await t.patch(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], removeLinks: { categories: [] } }),
        await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { price: 3 }, addLinks: { categories: [] } }),
        // as a job (a where): refused before the job is started
        await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: [{ type: 'equals', attribute: 'id', value: id }], addLinks: { categories: [] } }),
      ];
      expect(answers.map((a) => [a.status, a.body.error?.code, a.body.error?.message])).toEqual([
        [400, 'CORE_VALIDATION_FAILED', 'ids must be a non-empty list of record ids'],
        [400, 'CORE_VALIDATION_FAILED', 'ids must be a non-empty list of record ids'],
        [400, 'CORE_VALIDATION_FAILED', 'addLinks.categories must be a non-empty list of record ids'],
        [400, 'CORE_VALIDATION_FAILED', 'removeLinks.categories must be a non-empty list of record ids'],
        [400, 'CORE_VALIDATION_FAILED', 'addLinks.categories must be a non-empty list of record ids'],
        [400, 'CORE_VALIDATION_FAILED', 'addLinks.categories must be a non-empty list of record ids'],
      ]);
      expect(answers[2].body.error.details.issues).toEqual([{ path: ['addLinks', 'categories'], code: 'invalid_format', message: 'ids must be record ids' }]);
      expect(await state(id)).toEqual(before);
      // Emptying a link is an update of its ids, on every route that takes values.
      expect((await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { categoriesIds: [] } }).expect(200)).body).toEqual({ updated: 1, errors: [] });
      expect((await state(id)).categoriesIds).toEqual([]);
    });

    it('restores an id listed twice once, with no error for its second mention, as entityMassUpdate updates it once', async () => {
      const [a, b] = [await product(), await product()];
      for (const id of [a, b]) await t.del(`${base}/Product/${id}`).expect(200);
      const restored = await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [a, b, a, 'no-such-id', b] }).expect(200);
      expect(restored.body).toEqual({ restored: 2, errors: [{ id: 'no-such-id', code: 'CORE_NOT_FOUND', message: "Product 'no-such-id' not found" }] });
      for (const id of [a, b]) expect((await streamOf(t, 'Product', id)).map((c) => c.action)).toEqual(['Restore', 'Delete', 'Create']);
      const updated = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a, a, b], values: { quantity: 2 } }).expect(200);
      expect(updated.body).toEqual({ updated: 2, errors: [] });
    });
  });
});
