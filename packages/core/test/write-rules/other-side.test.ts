import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole, type UserClient } from '../../../../test/support/users';

/**
 * CONTRACT §15 on the other side of a `hasMany` link: `Brand.products` is held by each product's
 * `brand`. A write of the link from the brand writes the products it adds and removes, so it must
 * obey what a write of those products would: the same refusal on every route, and nothing stored.
 * A many-to-many pair is in the lists of both its records: it is judged on both (see
 * `other-side-routes.test.ts`); a field right on either side holds for both (they state one relation).
 */

/** How a route answered: stored, or refused with a status (where the route tells one), code and message. */
type Outcome = { stored: true } | { stored: false; status?: number; code?: string; message: string };

type Answer = { status: number; body: any };

const fromHttp = (res: Answer): Outcome => (res.status === 200 ? { stored: true } : { stored: false, status: res.status, code: res.body.error?.code, message: res.body.error?.message ?? '' });

/** A write of the link `link` of the record `owner` (of `entity`): add `id`, or remove it. */
interface LinkCall {
  user: UserClient;
  entity: 'Brand' | 'Category';
  owner: string;
  id: string;
  /** The ids the owner holds before (a set replacement sends them with `id` added or left out). */
  before: string[];
}

type Route = { name: string; run: (call: LinkCall, change: 'add' | 'remove') => Promise<Outcome> };

function routes(gen: 'A' | 'B', base: string): Route[] {
  const update = gen === 'A' ? 'patch' : 'put';
  const upsertPath = gen === 'A' ? `${base}/upsert` : `${base}/MassActions/action/upsert`;
  const after = ({ before, id }: LinkCall, change: 'add' | 'remove') => (change === 'add' ? [...before, id] : before.filter((x) => x !== id));
  return [
    { name: `${update.toUpperCase()} ${base}/{Entity}/{id}`, run: async (c, change) => fromHttp(await c.user[update](`${base}/${c.entity}/${c.owner}`, { productsIds: after(c, change) })) },
    {
      name: `link route ${base}/{Entity}/{id}/products`,
      run: async (c, change) => fromHttp(change === 'add' ? await c.user.post(`${base}/${c.entity}/${c.owner}/products`, { id: c.id }) : await c.user.del(`${base}/${c.entity}/${c.owner}/products?id=${c.id}`)),
    },
    {
      name: `${upsertPath}`,
      run: async (c, change) => {
        const res = await c.user.post(upsertPath, [{ entity: c.entity, payload: { id: c.owner, productsIds: after(c, change) } }]);
        if (res.status !== 200) return fromHttp(res);
        const [item] = res.body as { status: string; message?: string }[];
        return item.status === 'Failed' ? { stored: false, message: item.message ?? '' } : { stored: true };
      },
    },
    {
      name: `${base}/entityMassUpdate (addLinks, removeLinks)`,
      run: async (c, change) => {
        const links = { [change === 'add' ? 'addLinks' : 'removeLinks']: { products: [c.id] } };
        const res = await c.user.post(`${base}/entityMassUpdate`, { entityName: c.entity, ids: [c.owner], values: {}, ...links });
        if (res.status !== 200) return fromHttp(res);
        const { errors = [] } = res.body as { errors?: { code: string; message: string }[] };
        return errors.length ? { stored: false, code: errors[0].code, message: errors[0].message } : { stored: true };
      },
    },
  ];
}

describe.each(TEST_DBS)('the other side of multiple links on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  const product = async (name: string, client: { post: TestApi['post'] } = t) => (await client.post('/api/Product', { name }).expect(200)).body.id as string;
  const productOf = async (id: string) => (await t.get(`/api/Product/${id}`).expect(200)).body;

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('refuses to move a product onto or off a brand when the caller may not edit Product.brand: 403 on every route, nothing stored', async () => {
      const user = await userWithRole(t, {
        scopes: { Product: { read: 'all', edit: 'all', create: true }, Brand: { read: 'all', edit: 'all', create: true } },
        fields: { Product: { brand: { edit: false } } },
      });
      const brand = (await user.post(`${base}/Brand`, { name: `Locked brand ${gen} ${kind}` }).expect(200)).body.id;
      for (const route of routes(gen, base)) {
        const p = await product(`Free ${route.name}`);
        expect([route.name, await route.run({ user, entity: 'Brand', owner: brand, id: p, before: [] }, 'add')]).toEqual([
          route.name,
          expect.objectContaining({ stored: false, message: 'Not allowed to edit Product.brand' }),
        ]);
        expect((await productOf(p)).brandId).toBeNull();
      }
      // A create naming the products is the same write.
      const p = await product('Free for a new brand');
      const created = await user.post(`${base}/Brand`, { name: `New locked brand ${gen} ${kind}`, productsIds: [p] }).expect(403);
      expect(created.body.error.message).toBe('Not allowed to edit Product.brand');
      expect((await productOf(p)).brandId).toBeNull();
    });

    it("refuses to move another user's product onto a brand when the caller edits only its own products: 403, and its own product moves", async () => {
      const user = await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'own', create: true }, Brand: { read: 'all', edit: 'all', create: true } } });
      const brand = (await user.post(`${base}/Brand`, { name: `Own-edit brand ${gen} ${kind}` }).expect(200)).body.id;
      for (const route of routes(gen, base)) {
        const theirs = await product(`Admin's ${route.name}`);
        expect([route.name, await route.run({ user, entity: 'Brand', owner: brand, id: theirs, before: [] }, 'add')]).toEqual([
          route.name,
          expect.objectContaining({ stored: false, message: 'Not allowed to edit this Product' }),
        ]);
        expect((await productOf(theirs)).brandId).toBeNull();
      }
      const mine = await product('Mine', user);
      expect(await routes(gen, base)[1].run({ user, entity: 'Brand', owner: brand, id: mine, before: [] }, 'add')).toEqual({ stored: true });
      expect((await productOf(mine)).brandId).toBe(brand);
    });

    it('refuses to link products to a category from its side when the caller may not edit Product.categories: 403 on every route', async () => {
      const user = await userWithRole(t, {
        scopes: { Product: { read: 'all', edit: 'all', create: true }, Category: { read: 'all', edit: 'all', create: true } },
        fields: { Product: { categories: { read: false, edit: false } } },
      });
      const category = (await t.post(`${base}/Category`, { name: `Locked side ${gen}`, code: `locked-side-${gen}-${kind}` }).expect(200)).body.id;
      for (const route of routes(gen, base)) {
        const p = await product(`Uncategorized ${route.name}`);
        expect([route.name, await route.run({ user, entity: 'Category', owner: category, id: p, before: [] }, 'add')]).toEqual([
          route.name,
          expect.objectContaining({ stored: false, message: 'Not allowed to edit Product.categories' }),
        ]);
        expect((await productOf(p)).categoriesIds).toEqual([]);
      }
      const p = await product('Uncategorized, for a new category');
      const created = await user.post(`${base}/Category`, { name: `New locked ${gen}`, code: `new-locked-${gen}-${kind}`, productsIds: [p] }).expect(403);
      expect(created.body.error.message).toBe('Not allowed to edit Product.categories');
      expect((await productOf(p)).categoriesIds).toEqual([]);
    });

    it('lets a role that may not edit brands link its products to one (the product holds the link), not to a category it may not edit (a pair is both records\')', async () => {
      const scopes = { Product: { read: 'all', edit: 'all', create: true }, Brand: { read: 'all', edit: 'no' }, Category: { read: 'all', edit: 'no' } };
      const user = await userWithRole(t, { scopes });
      const brand = (await t.post(`${base}/Brand`, { name: `Not editable ${gen} ${kind}` }).expect(200)).body.id;
      const category = (await t.post(`${base}/Category`, { name: `Not editable ${gen}`, code: `not-editable-${gen}-${kind}` }).expect(200)).body.id;
      const p = await product('Linked by a reader of brands', user);
      await user.patch(`${base}/Product/${p}`, { brandId: brand }).expect(200);
      const refused = await user.patch(`${base}/Product/${p}`, { categoriesIds: [category] }).expect(403);
      expect(refused.body.error).toMatchObject({ code: 'CORE_FORBIDDEN', message: 'Not allowed to edit Category' });
      expect(await productOf(p)).toMatchObject({ brandId: brand, categoriesIds: [] });
      // With the right to edit categories, the same write is stored.
      const editor = await userWithRole(t, { scopes: { ...scopes, Category: { read: 'all', edit: 'all' } } });
      await editor.patch(`${base}/Product/${p}`, { categoriesIds: [category] }).expect(200);
      expect(await productOf(p)).toMatchObject({ brandId: brand, categoriesIds: [category] });
    });

    it('leaves linked a product the caller cannot read, on every route, answering as for an id that is not linked', async () => {
      const entity = 'Brand' as const;
      const user = await userWithRole(t, {
        scopes: { Product: { read: 'own', edit: 'own', create: true }, Brand: { read: 'all', edit: 'all', create: true } },
      });
      const owner = (await user.post(`${base}/${entity}`, { name: `Shared brand ${gen} ${kind}` }).expect(200)).body.id;
      for (const route of routes(gen, base)) {
        const hidden = await product(`Hidden ${route.name}`);
        await t.post(`/api/${entity}/${owner}/products`, { id: hidden }).expect(200);
        // The caller's view of the brand's list lacks the product: removing it, by name or by
        // writing the list it sees, changes nothing, as removing an id that is not linked.
        expect([route.name, await route.run({ user, entity, owner, id: hidden, before: [] }, 'remove')]).toEqual([route.name, { stored: true }]);
        expect([route.name, await route.run({ user, entity, owner, id: 'not-linked', before: [] }, 'remove')]).toEqual([route.name, { stored: true }]);
        expect((await productOf(hidden)).brandId).toBe(owner);
        await t.del(`/api/${entity}/${owner}/products?id=${hidden}`).expect(200);
      }
      // The caller's own products it unlinks freely.
      const mine = await product('Mine, on a shared brand', user);
      await user.post(`${base}/${entity}/${owner}/products`, { id: mine }).expect(200);
      await user.del(`${base}/${entity}/${owner}/products?id=${mine}`).expect(200);
    });
  });
});
