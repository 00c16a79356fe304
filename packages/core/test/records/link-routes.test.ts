import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { linkTargets, streamOf } from '../../../../test/support/link-targets';
import { stampAfter } from '../../../../test/support/stamps';
import { userWithRole, type UserClient } from '../../../../test/support/users';

/** `POST` and `DELETE /{Entity}/{id}/{link}` (CONTRACT §16, following the rules of §15). */
describe.each(TEST_DBS)('link routes on %s', (kind) => {
  let t: TestApi;
  let cats: string[];
  let brands: string[];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    ({ cats, brands } = await linkTargets(t, { prefix: 'L', categories: 4, brands: 2 }));
  });
  afterAll(() => t.close());

  const changesOf = (entity: string, id: string) => streamOf(t, entity, id);
  const product = async (body: Record<string, unknown> = {}) => (await t.post('/api/Product', { name: 'Linked', ...body }).expect(200)).body.id as string;
  const read = async (id: string) => (await t.get(`/api/Product/${id}`).expect(200)).body;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('links with {id} and {ids} and unlinks with {id}, {ids} and ?id=, answering true, logged as Relate and Unrelate', async () => {
      const id = await product();
      const post = (body: unknown) => t.post(`${base}/Product/${id}/categories`, body).expect(200).expect('Content-Type', /json/);
      expect((await post({ id: cats[0] })).body).toBe(true);
      expect((await post({ ids: [cats[1], cats[2], cats[3]] })).body).toBe(true);
      expect((await read(id)).categoriesIds).toEqual(cats);
      expect((await t.del(`${base}/Product/${id}/categories`).send({ id: cats[0] }).expect(200)).body).toBe(true);
      expect((await t.del(`${base}/Product/${id}/categories`).send({ ids: [cats[1], cats[2]] }).expect(200)).body).toBe(true);
      expect((await read(id)).categoriesIds).toEqual([cats[3]]);
      await post({ ids: [cats[0], cats[1]] });
      expect((await t.del(`${base}/Product/${id}/categories?id=${cats[0]},${cats[3]}`).expect(200)).body).toBe(true);
      expect((await read(id)).categoriesIds).toEqual([cats[1]]);
      // multiple links are id sets: compared in id order
      const sorted = (ids: unknown) => [...(ids as string[])].sort();
      const changes = await changesOf('Product', id);
      expect(changes.map((c) => [c.action, c.diff.categoriesIds && { was: sorted(c.diff.categoriesIds.was), became: sorted(c.diff.categoriesIds.became) }])).toEqual([
        ['Unrelate', { was: [cats[0], cats[1], cats[3]], became: [cats[1]] }],
        ['Relate', { was: [cats[3]], became: [cats[0], cats[1], cats[3]] }],
        ['Unrelate', { was: [cats[1], cats[2], cats[3]], became: [cats[3]] }],
        ['Unrelate', { was: cats, became: [cats[1], cats[2], cats[3]] }],
        ['Relate', { was: [cats[0]], became: cats }],
        ['Relate', { was: [], became: [cats[0]] }],
        ['Create', undefined],
      ]);
      // the other side of the many-to-many link reads the same
      expect((await t.get(`/api/Category/${cats[1]}`).expect(200)).body.productsIds).toContain(id);
    });

    it('links and unlinks more records at once than one SQLite statement holds (600), by every route that writes a multiple link', async () => {
      const tag = `many-${_g}-${kind}`;
      const upserted = await t.post('/api/upsert', Array.from({ length: 1200 }, (_, i) => ({ entity: 'Category', payload: { name: `${tag} ${i}`, code: `${tag}-${i}` } }))).expect(200);
      const ids = (upserted.body as { entity: { id: string } }[]).map((item) => item.entity.id);
      const [first, second] = [ids.slice(0, 600), ids.slice(600)];
      const linked = async (id: string) => ((await read(id)).categoriesIds as string[]).length;
      const created = (await t.post(`${base}/Product`, { name: tag, categoriesIds: first }).expect(200)).body.id as string;
      expect(await linked(created)).toBe(600);
      await t.patch(`${base}/Product/${created}`, { categoriesIds: second }).expect(200);
      expect(await linked(created)).toBe(600);
      await t.put(`${base}/Product/${created}`, { categoriesIds: ids }).expect(200);
      expect(await linked(created)).toBe(1200);
      const other = await product();
      expect((await t.post(`${base}/Product/${other}/categories`, { ids }).expect(200)).body).toBe(true);
      expect(await linked(other)).toBe(1200);
      expect((await t.del(`${base}/Product/${other}/categories`).send({ ids: first }).expect(200)).body).toBe(true);
      expect(await linked(other)).toBe(600);
      // The other side reads the same.
      expect((await t.get(`/api/Category/${second[599]}`).expect(200)).body.productsIds).toEqual(expect.arrayContaining([created, other]));
    });

    it('changes nothing, and logs nothing, for an id already linked or not linked', async () => {
      const id = await product({ categoriesIds: [cats[0]] });
      await t.post(`${base}/Product/${id}/categories`, { id: cats[0] }).expect(200, 'true');
      await t.del(`${base}/Product/${id}/categories?id=${cats[1]}`).expect(200, 'true');
      await t.del(`${base}/Product/${id}/brand`).send({ id: brands[0] }).expect(200, 'true');
      expect((await changesOf('Product', id)).map((c) => c.action)).toEqual(['Create']);
    });

    it('sets and clears a single link: one id only, and unlinking another record than the linked one changes nothing', async () => {
      const id = await product();
      await t.post(`${base}/Product/${id}/brand`, { id: brands[0] }).expect(200, 'true');
      expect((await read(id)).brandId).toBe(brands[0]);
      await t.post(`${base}/Product/${id}/brand`, { ids: [brands[1]] }).expect(200, 'true');
      expect((await read(id)).brandId).toBe(brands[1]);
      const two = await t.post(`${base}/Product/${id}/brand`, { ids: brands }).expect(400);
      expect(two.body.error.code).toBe('CORE_VALIDATION_FAILED');
      await t.del(`${base}/Product/${id}/brand?id=${brands[0]}`).expect(200, 'true');
      expect((await read(id)).brandId).toBe(brands[1]);
      await t.del(`${base}/Product/${id}/brand`).send({ id: brands[1] }).expect(200, 'true');
      expect((await read(id)).brandId).toBeNull();
      expect((await changesOf('Product', id)).map((c) => [c.action, c.diff])).toEqual([
        ['Unrelate', { brandId: { was: brands[1], became: null } }],
        ['Relate', { brandId: { was: brands[0], became: brands[1] } }],
        ['Relate', { brandId: { was: null, became: brands[0] } }],
        ['Create', expect.anything()],
      ]);
    });

    it('links from the side of a one-to-many link (the records it lists point back), logging the change of each record it moves', async () => {
      const brand = (await t.post('/api/Brand', { name: `One to many ${base}` }).expect(200)).body.id;
      const [p1, p2] = [await product(), await product({ brandId: brands[0] })];
      await t.post(`${base}/Brand/${brand}/products`, { ids: [p1, p2] }).expect(200, 'true');
      expect([(await read(p1)).brandId, (await read(p2)).brandId]).toEqual([brand, brand]);
      await t.del(`${base}/Brand/${brand}/products?id=${p1}`).expect(200, 'true');
      expect([(await read(p1)).brandId, (await read(p2)).brandId]).toEqual([null, brand]);
      expect((await t.get(`/api/Brand/${brand}`).expect(200)).body.productsIds).toEqual([p2]);
      // each product's own link changed: its stream (and events) tell it
      expect((await changesOf('Product', p1)).map((c) => [c.action, c.diff])).toEqual([
        ['Unrelate', { brandId: { was: brand, became: null } }],
        ['Relate', { brandId: { was: null, became: brand } }],
        ['Create', expect.anything()],
      ]);
      expect((await changesOf('Product', p2)).slice(0, 1).map((c) => [c.action, c.diff])).toEqual([['Relate', { brandId: { was: brands[0], became: brand } }]]);
      // a create and a mass update of the brand's side log them as well
      const p3 = await product();
      const other = (await t.post(`${base}/Brand`, { name: `Created with products ${base}`, productsIds: [p3] }).expect(200)).body.id;
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Brand', ids: [brand], addLinks: { products: [p3] } }).expect(200);
      expect((await changesOf('Product', p3)).map((c) => [c.action, c.diff])).toEqual([
        ['Relate', { brandId: { was: other, became: brand } }],
        ['Relate', { brandId: { was: null, became: other } }],
        ['Create', expect.anything()],
      ]);
    });

    it('records who moved a one-to-many link, and when, on each record whose link column it moved, by every route of the listing side', async () => {
      const full = { create: true, read: 'all', edit: 'all', delete: 'all' };
      const editor: UserClient = await userWithRole(t, { scopes: { Brand: full, Product: full } });
      const brand = (await t.post('/api/Brand', { name: `Modified by ${base}` }).expect(200)).body.id;
      const [p1, p2, p3, p4] = [await product(), await product(), await product(), await product()];
      await t.post(`${base}/Brand/${brand}/products`, { id: p4 }).expect(200, 'true');
      // The admin made (and linked) them; each route of the brand's side, sent by the editor, moves one.
      const moves: [string, () => PromiseLike<unknown>][] = [
        [p1, () => editor.post(`${base}/Brand/${brand}/products`, { id: p1 }).expect(200, 'true')],
        [p2, () => editor.patch(`${base}/Brand/${brand}`, { productsIds: [p1, p2, p4] }).expect(200)],
        [p3, () => editor.post(`${base}/entityMassUpdate`, { entityName: 'Brand', ids: [brand], addLinks: { products: [p3] } }).expect(200)],
        [p4, () => editor.del(`${base}/Brand/${brand}/products?id=${p4}`).expect(200, 'true')],
      ];
      for (const [id, move] of moves) {
        const after = await stampAfter(t, 'Product', id, { by: editor.user.id, write: move });
        // The write that changed the brand changed the product, at the same time.
        expect(after.modifiedAt).toBe((await t.get(`/api/Brand/${brand}`).expect(200)).body.modifiedAt);
      }
      expect((await t.get(`/api/Brand/${brand}`).expect(200)).body.productsIds.sort()).toEqual([p1, p2, p3].sort());
    });

    it('answers 404 for an unknown entity, record or link, and for a field that is no link', async () => {
      const id = await product();
      for (const path of [`${base}/Product/${id}/nope`, `${base}/Product/${id}/name`, `${base}/Product/no-such/categories`, `${base}/Nope/${id}/categories`]) {
        const res = await t.post(path, { id: cats[0] }).expect(404);
        expect(res.body.error.code).toMatch(/^CORE_(NOT_FOUND|ROUTE_NOT_FOUND)$/);
        await t.del(`${path}?id=${cats[0]}`).expect(404);
      }
      await t.del(`${base}/Product/${id}`).expect(200);
      await t.post(`${base}/Product/${id}/categories`, { id: cats[0] }).expect(404);
    });

    it('answers 400 to a bad body or bad ids, and writes nothing', async () => {
      const id = await product({ categoriesIds: [cats[0]] });
      const bad: unknown[] = [[cats[1]], {}, { id: 5 }, { ids: cats[1] }, { ids: [] }, { ids: [cats[1], 7] }, { id: cats[1], ids: [cats[2]] }, { id: cats[1], other: 1 }, { id: 'bad id!' }, { id: 'x'.repeat(65) }];
      for (const body of bad) {
        const res = await t.post(`${base}/Product/${id}/categories`, body).expect(400);
        expect(res.body.error).toMatchObject({ code: expect.stringMatching(/^CORE_(VALIDATION_FAILED|UNKNOWN_FIELD)$/), message: expect.any(String) });
        await t.del(`${base}/Product/${id}/categories`).send(body as object).expect(400);
      }
      await t.del(`${base}/Product/${id}/categories`).expect(400);
      await t.del(`${base}/Product/${id}/categories?id=`).expect(400);
      const invalidJson = await t.post(`${base}/Product/${id}/categories`).set('Content-Type', 'application/json').send('{"id":');
      expect(invalidJson.status).toBe(400);
      expect((await read(id)).categoriesIds).toEqual([cats[0]]);
      expect(await changesOf('Product', id)).toHaveLength(1);
    });

    it('refuses a missing target and a target the caller may not read with the same 400 CORE_INVALID_LINK', async () => {
      // A pair is the category's too: the role edits its own categories, and cannot read the admin's.
      const hidden = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'all' }, Brand: { read: 'own' }, Category: { read: 'own', edit: 'own' } } });
      const id = (await hidden.post('/api/Product', { name: 'Mine' }).expect(200)).body.id;
      const cases: [string, string, string][] = [
        ['brand', brands[0], `Brand '${brands[0]}' not found (brandId)`],
        ['brand', 'no-such-brand', "Brand 'no-such-brand' not found (brandId)"],
        ['categories', cats[0], `Category '${cats[0]}' not found (categoriesIds)`],
        ['categories', 'no-such-cat', "Category 'no-such-cat' not found (categoriesIds)"],
      ];
      for (const [link, target, message] of cases) {
        const res = await hidden.post(`${base}/Product/${id}/${link}`, { id: target }).expect(400);
        expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message });
      }
      // the admin gets the same answer for the missing ones
      expect((await t.post(`${base}/Product/${id}/categories`, { ids: [cats[0], 'no-such-cat'] }).expect(400)).body.error.message).toBe("Category 'no-such-cat' not found (categoriesIds)");
      // a deleted target is missing too
      const gone = (await t.post('/api/Category', { name: 'Gone', code: `gone-${base}` }).expect(200)).body.id;
      await t.del(`/api/Category/${gone}`).expect(200);
      expect((await t.post(`${base}/Product/${id}/categories`, { id: gone }).expect(400)).body.error.code).toBe('CORE_INVALID_LINK');
      expect((await read(id)).categoriesIds).toEqual([]);
      expect((await changesOf('Product', id)).map((c) => c.action)).toEqual(['Create']);
    });

    it('needs the edit right on the record and on the link field: 403 otherwise, 404 for a record hidden by own', async () => {
      const users: [string, UserClient][] = [
        ['no edit right', await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'no' }, Category: { read: 'all' }, Brand: { read: 'all' } } })],
        ['edit own, not own', await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'own' }, Category: { read: 'all' }, Brand: { read: 'all' } } })],
        ['link field not editable', await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'all' }, Category: { read: 'all' }, Brand: { read: 'all' } }, fields: { Product: { categories: { edit: false }, brand: { edit: false } } } })],
      ];
      const id = await product({ categoriesIds: [cats[0]], brandId: brands[0] });
      for (const [why, user] of users) {
        for (const [link, target] of [['categories', cats[1]], ['brand', brands[1]]]) {
          const post = await user.post(`${base}/Product/${id}/${link}`, { id: target });
          expect([why, post.status, post.body.error?.code]).toEqual([why, 403, 'CORE_FORBIDDEN']);
          const del = await user.del(`${base}/Product/${id}/${link}?id=${link === 'brand' ? brands[0] : cats[0]}`);
          expect([why, del.status, del.body.error?.code]).toEqual([why, 403, 'CORE_FORBIDDEN']);
        }
      }
      const own = await userWithRole(t, { scopes: { Product: { read: 'own', edit: 'own' }, Category: { read: 'all' } } });
      await own.post(`${base}/Product/${id}/categories`, { id: cats[1] }).expect(404);
      expect(await read(id)).toMatchObject({ categoriesIds: [cats[0]], brandId: brands[0] });
      expect(await changesOf('Product', id)).toHaveLength(1);
      // A pair is the category's too: removing one with a category the user cannot read is the
      // 400 of a missing link (CONTRACT §15: its side would refuse), on every route; keeping it is
      // fine. (The user edits its own categories: a type it may not edit at all would be a 403.)
      const editor = await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'all' }, Category: { read: 'own', edit: 'own' } } });
      const missing = `Category '${cats[0]}' not found (categoriesIds)`;
      expect((await editor.del(`${base}/Product/${id}/categories?id=${cats[0]}`).expect(400)).body.error.message).toBe(missing);
      expect((await editor.patch(`${base}/Product/${id}`, { categoriesIds: [] }).expect(400)).body.error.message).toBe(missing);
      const path = base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
      expect((await editor.post(path, [{ entity: 'Product', payload: { id, categoriesIds: [] } }]).expect(200)).body[0]).toMatchObject({ status: 'Failed', message: missing });
      const mass = await editor.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], removeLinks: { categories: [cats[0]] } }).expect(200);
      expect(mass.body).toEqual({ updated: 0, errors: [{ id, code: 'CORE_INVALID_LINK', message: missing }] });
      await editor.patch(`${base}/Product/${id}`, { categoriesIds: [cats[0]], name: 'Kept' }).expect(200);
      expect((await read(id)).categoriesIds).toEqual([cats[0]]);
      await t.del(`${base}/Product/${id}/categories?id=${cats[0]}`).expect(200, 'true');
      expect((await read(id)).categoriesIds).toEqual([]);
    });
  });
});
