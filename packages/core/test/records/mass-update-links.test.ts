import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { linkTargets, streamOf } from '../../../../test/support/link-targets';
import { userWithRole } from '../../../../test/support/users';

/** `entityMassUpdate` with `addLinks` and `removeLinks` (CONTRACT §16). */
describe.each(TEST_DBS)('entityMassUpdate addLinks and removeLinks on %s', (kind) => {
  let t: TestApi;
  let cats: string[];
  let brands: string[];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    ({ cats, brands } = await linkTargets(t, { prefix: 'M', categories: 3, brands: 2 }));
  });
  afterAll(() => t.close());

  const changesOf = (id: string) => streamOf(t, 'Product', id);
  const products = async (n: number, body: Record<string, unknown> = {}) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await t.post('/api/Product', { name: `Mass ${i}`, ...body }).expect(200)).body.id);
    return ids;
  };
  const read = async (id: string) => (await t.get(`/api/Product/${id}`).expect(200)).body;
  const sorted = (ids: unknown) => [...(ids as string[])].sort();

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('adds and removes links on every record, one change per record that changed, and none for one that did not', async () => {
      const [a, b, c] = await products(3);
      await t.post(`/api/Product/${c}/categories`, { ids: [cats[0], cats[1]] }).expect(200);
      const added = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a, b, c], addLinks: { categories: [cats[0], cats[1]], brand: [brands[0]] } }).expect(200);
      expect(added.body).toEqual({ updated: 3, errors: [] });
      for (const id of [a, b, c]) expect(await read(id)).toMatchObject({ brandId: brands[0] });
      for (const id of [a, b, c]) expect(sorted((await read(id)).categoriesIds)).toEqual([cats[0], cats[1]]);
      const removed = await t.patch(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a, b], removeLinks: { categories: [cats[0]], brand: [brands[0]] } }).expect(200);
      expect(removed.body).toEqual({ updated: 2, errors: [] });
      expect(await read(a)).toMatchObject({ categoriesIds: [cats[1]], brandId: null });
      // values, added and removed links in one request: one Update per record
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a, c], values: { quantity: 3 }, addLinks: { categories: [cats[2]] }, removeLinks: { categories: [cats[1]] } }).expect(200);
      expect(await read(c)).toMatchObject({ quantity: 3 });
      expect(sorted((await read(c)).categoriesIds)).toEqual([cats[0], cats[2]]);
      expect((await changesOf(a)).map((x) => x.action)).toEqual(['Update', 'Unrelate', 'Relate', 'Create']);
      expect((await changesOf(b)).map((x) => x.action)).toEqual(['Unrelate', 'Relate', 'Create']);
      // c held both categories already: only its brand was added by the first mass update
      const [update, relate] = await changesOf(c);
      expect(relate).toEqual(expect.objectContaining({ action: 'Relate', diff: { brandId: { was: null, became: brands[0] } } }));
      expect(update.action).toBe('Update');
      expect(update.diff.quantity).toEqual({ was: null, became: 3 });
      expect(sorted(update.diff.categoriesIds.was)).toEqual([cats[0], cats[1]]);
      expect(sorted(update.diff.categoriesIds.became)).toEqual([cats[0], cats[2]]);
      // nothing to change: nothing logged, the records count as updated
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a, b], addLinks: { categories: [cats[1]] } }).expect(200);
      expect(await changesOf(b)).toHaveLength(3);
    });

    it('logs what the write changed: values sent as stored beside a removed link are an Unrelate, an id added that was linked beside a new one a Relate', async () => {
      const [a] = await products(1, { quantity: 5, brandId: brands[0] });
      await t.post(`/api/Product/${a}/categories`, { ids: [cats[0], cats[1]] }).expect(200);
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a], values: { quantity: 5 }, removeLinks: { categories: [cats[0]] } }).expect(200);
      const [unrelate] = await changesOf(a);
      expect(unrelate).toEqual(expect.objectContaining({ action: 'Unrelate', diff: { categoriesIds: { was: expect.any(Array), became: [cats[1]] } } }));
      // cats[1] is linked already, cats[2] is new; brands[0] is removed from another link
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a], addLinks: { categories: [cats[1], cats[2]] } }).expect(200);
      expect((await changesOf(a))[0].action).toBe('Relate');
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [a], addLinks: { categories: [cats[2]] }, removeLinks: { brand: [brands[0]] } }).expect(200);
      const [unrelated] = await changesOf(a);
      expect(unrelated).toEqual(expect.objectContaining({ action: 'Unrelate', diff: { brandId: { was: brands[0], became: null } } }));
    });

    it('runs addLinks of a where as a job', async () => {
      const ids = await products(2, { mpn: `where-${base}` });
      const job = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: [{ type: 'equals', attribute: 'mpn', value: `where-${base}` }], addLinks: { categories: [cats[2]] } }).expect(200);
      expect(job.body.jobId).toEqual(expect.any(String));
      for (let i = 0; i < 100; i++) {
        const state = (await request(t.server).get(`${base}/Job/${job.body.jobId}`).set('Authorization-Token', t.token).expect(200)).body;
        if (state.status === 'Success') break;
        expect(['Pending', 'Running']).toContain(state.status);
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const id of ids) expect((await read(id)).categoriesIds).toEqual([cats[2]]);
    });

    it('answers 400 to an unknown link, a field that is no link, bad id lists and a second id for a single link, and writes nothing', async () => {
      const [id] = await products(1);
      const bad: [Record<string, unknown>, string][] = [
        [{ addLinks: { nope: [cats[0]] } }, 'CORE_UNKNOWN_FIELD'],
        [{ removeLinks: { name: [cats[0]] } }, 'CORE_UNKNOWN_FIELD'],
        [{ addLinks: [cats[0]] }, 'CORE_VALIDATION_FAILED'],
        [{ addLinks: { categories: cats[0] } }, 'CORE_VALIDATION_FAILED'],
        [{ addLinks: { categories: [1] } }, 'CORE_VALIDATION_FAILED'],
        [{ removeLinks: { categories: null } }, 'CORE_VALIDATION_FAILED'],
        [{ addLinks: { categories: ['bad id!'] } }, 'CORE_VALIDATION_FAILED'],
        [{ addLinks: { brand: brands } }, 'CORE_VALIDATION_FAILED'],
        // one link changed two ways at once: neither could be honoured whole
        [{ values: { categoriesIds: [cats[0]] }, addLinks: { categories: [cats[1]] } }, 'CORE_VALIDATION_FAILED'],
        [{ values: { brandId: brands[0] }, removeLinks: { brand: [brands[1]] } }, 'CORE_VALIDATION_FAILED'],
        [{ values: { categories: [{ name: 'Made' }] }, removeLinks: { categories: [cats[1]] } }, 'CORE_VALIDATION_FAILED'],
      ];
      for (const [body, code] of bad) {
        const res = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], ...body });
        expect([body, res.status, res.body.error?.code]).toEqual([body, 400, code]);
      }
      expect(await changesOf(id)).toHaveLength(1);
    });

    it('reports a missing or hidden target per record as CORE_INVALID_LINK, and links nothing', async () => {
      // A pair is the category's too: the role edits its own categories, and cannot read the admin's.
      const hidden = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'all' }, Category: { read: 'own', edit: 'own' } } });
      const ids = await products(2);
      for (const [user, target] of [[t, 'no-such-cat'], [hidden, cats[0]]] as const) {
        const res = await user.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids, addLinks: { categories: [target] } }).expect(200);
        expect(res.body.updated).toBe(0);
        expect(res.body.errors).toEqual(ids.map((id) => ({ id, code: 'CORE_INVALID_LINK', message: `Category '${target}' not found (categoriesIds)` })));
      }
      for (const id of ids) expect(await changesOf(id)).toHaveLength(1);
    });

    it('needs the edit right on the entity type (403) and on the link field, and edits only records the role may edit', async () => {
      const ids = await products(2, { categoriesIds: [cats[0]] });
      const noEdit = await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'no' }, Category: { read: 'all' } } });
      for (const body of [{ addLinks: { categories: [cats[1]] } }, { removeLinks: { categories: [cats[0]] } }]) {
        expect((await noEdit.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids, ...body }).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      }
      // a field right is judged for the whole request, before any record
      const noField = await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'all' }, Category: { read: 'all' } }, fields: { Product: { categories: { edit: false }, price: { edit: false } } } });
      for (const body of [{ addLinks: { categories: [cats[1]] } }, { removeLinks: { categories: [cats[0]] } }, { values: { price: 1 } }]) {
        // Refused before any record, as a PATCH of one is (CONTRACT §15).
        const res = await noField.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids, ...body }).expect(403);
        const field = 'values' in body ? 'price' : 'categories';
        expect(res.body.error).toMatchObject({ code: 'CORE_FORBIDDEN', message: `Not allowed to edit Product.${field}` });
      }
      const own = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'own' }, Category: { read: 'all', edit: 'all' } } });
      const mine = (await own.post('/api/Product', { name: 'Mine' }).expect(200)).body.id;
      const res = await own.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [mine, ...ids], addLinks: { categories: [cats[2]] } }).expect(200);
      expect(res.body.updated).toBe(1);
      expect(res.body.errors.map((e: { id: string; code: string }) => [e.id, e.code])).toEqual(ids.map((id) => [id, 'CORE_FORBIDDEN']));
      expect((await read(mine)).categoriesIds).toEqual([cats[2]]);
      for (const id of ids) {
        expect((await read(id)).categoriesIds).toEqual([cats[0]]);
        expect(await changesOf(id)).toHaveLength(1);
      }
    });
  });
});
