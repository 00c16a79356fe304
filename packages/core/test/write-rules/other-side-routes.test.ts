import { definePlugin } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';
import { streamOf } from '../../../../test/support/link-targets';
import { userWithRole, type UserClient } from '../../../../test/support/users';

/**
 * CONTRACT §15 for writes of a list seen from its other side, through every write route: a pair of
 * `Category.products` is in the product's `categories` too, and `Brand.products` writes each
 * product's `brand`. Such a write changes the products it adds and removes, so it is judged as a
 * write of them (the role's edit level on Product), answers a unique index of Product that it
 * breaks as a write of the product does, and is refused alike on every route with nothing stored.
 */
jest.setTimeout(180_000);

type Entity = 'Category' | 'Brand';
type Change = 'add' | 'remove';

/** How a route answered: stored, or refused with what the route tells of the refusal. */
type Outcome = { stored: true } | { stored: false; status?: number; code?: string; message: string; details?: unknown };

/** How every route must refuse: the status, code and (when given) details where the route tells them, and the message. */
interface Refusal {
  status: number;
  code: string;
  message: string;
  details?: unknown;
}

/** The write of one list: `product` added to the list of `owner` (a new record when absent) or removed from it. */
interface ListWrite {
  t: TestApi;
  user: UserClient;
  entity: Entity;
  owner?: string;
  product: { id: string; name: string };
  /** The ids the owner holds before (a new record is created holding them too). */
  before: string[];
  change: Change;
}

interface Route {
  name: string;
  /** Creates the owner (the others update it). */
  creates?: boolean;
  /** Only adds (link objects, creates). */
  addsOnly?: boolean;
  /** Runs on the instance whose Category and Brand have a write hook: their upserts take the single-record path. */
  single?: boolean;
  run(write: ListWrite): Promise<Outcome>;
}

type Answer = { status: number; body: any };

const fromHttp = (res: Answer): Outcome =>
  res.status === 200 ? { stored: true } : { stored: false, status: res.status, code: res.body.error?.code, message: res.body.error?.message ?? '', details: res.body.error?.details };
const fromItem = (item: { status: string; message?: string }): Outcome => (item.status === 'Failed' ? { stored: false, message: item.message ?? '' } : { stored: true });
const fromMass = (result: { errors: { code: string; message: string }[] }): Outcome =>
  result.errors.length ? { stored: false, code: result.errors[0].code, message: result.errors[0].message } : { stored: true };

/** A new record of the owner's type, with the fields it requires. */
let made = 0;
const newOwner = (entity: Entity): Record<string, unknown> => {
  made += 1;
  return entity === 'Category' ? { name: `New category ${made}`, code: `new-${made}-${Date.now()}` } : { name: `New brand ${made} ${Date.now()}` };
};

/** The list after the write. */
const after = ({ before, product, change }: ListWrite) => (change === 'add' ? [...before, product.id] : before.filter((id) => id !== product.id));

/** A job's answer (or the refusal before it was queued). */
async function viaJob(w: ListWrite, { base, path, body }: { base: string; path: string; body: unknown }): Promise<Outcome | { result: any }> {
  const res = await w.user.post(`${base}/${path}`, body);
  if (res.status !== 200) return fromHttp(res);
  const job = await finishedJob(w.t, { base, id: res.body.jobId });
  if (job.status !== 'Success') throw new Error(`job ended ${String(job.status)}: ${String(job.message)}`);
  return { result: job.result };
}

/** Every route that writes a list, in one path generation. */
function routes(gen: 'A' | 'B', base: string): Route[] {
  const update = gen === 'A' ? 'patch' : 'put';
  const upsertPath = gen === 'A' ? `${base}/upsert` : `${base}/MassActions/action/upsert`;
  const upsert = async (w: ListWrite, payload: Record<string, unknown>) => {
    const res = await w.user.post(upsertPath, [{ entity: w.entity, payload }]);
    return res.status === 200 ? fromItem(res.body[0]) : fromHttp(res);
  };
  const links = (w: ListWrite) => ({ [w.change === 'add' ? 'addLinks' : 'removeLinks']: { products: [w.product.id] } });
  const mass = async (w: ListWrite, change: Record<string, unknown>) => {
    const res = await w.user.post(`${base}/entityMassUpdate`, { entityName: w.entity, ids: [w.owner], ...change });
    return res.status === 200 ? fromMass(res.body) : fromHttp(res);
  };
  const massJob = async (w: ListWrite, change: Record<string, unknown>) => {
    const answer = await viaJob(w, { base, path: 'entityMassUpdate', body: { entityName: w.entity, where: [{ type: 'equals', attribute: 'id', value: w.owner }], ...change } });
    return 'result' in answer ? fromMass(answer.result) : answer;
  };
  const upsertJob = async (w: ListWrite, payload: Record<string, unknown>) => {
    const answer = await viaJob(w, { base, path: 'upsertAsync', body: [{ entity: w.entity, payload }] });
    return 'result' in answer ? fromItem(answer.result[0]) : answer;
  };
  const objects = (w: ListWrite) => [...w.before, { name: w.product.name }];
  return [
    { name: `${update.toUpperCase()} ${base}/{Entity}/{id}`, run: async (w) => fromHttp(await w.user[update](`${base}/${w.entity}/${w.owner}`, { productsIds: after(w) })) },
    {
      name: `POST and DELETE ${base}/{Entity}/{id}/products`,
      run: async (w) => fromHttp(w.change === 'add' ? await w.user.post(`${base}/${w.entity}/${w.owner}/products`, { id: w.product.id }) : await w.user.del(`${base}/${w.entity}/${w.owner}/products`).send({ id: w.product.id })),
    },
    { name: `${upsertPath} (set-based)`, run: (w) => upsert(w, { id: w.owner, productsIds: after(w) }) },
    { name: `${upsertPath} (single-record path)`, single: true, run: (w) => upsert(w, { id: w.owner, productsIds: after(w) }) },
    { name: `${base}/upsertAsync (job)`, run: (w) => upsertJob(w, { id: w.owner, productsIds: after(w) }) },
    { name: `${base}/entityMassUpdate (ids, values)`, run: (w) => mass(w, { values: { productsIds: after(w) } }) },
    { name: `${base}/entityMassUpdate (ids, addLinks/removeLinks)`, run: (w) => mass(w, links(w)) },
    { name: `${base}/entityMassUpdate (where: job, values)`, run: (w) => massJob(w, { values: { productsIds: after(w) } }) },
    { name: `${base}/entityMassUpdate (where: job, addLinks/removeLinks)`, run: (w) => massJob(w, links(w)) },
    { name: `${update.toUpperCase()} ${base}/{Entity}/{id} (find-or-create)`, addsOnly: true, run: async (w) => fromHttp(await w.user[update](`${base}/${w.entity}/${w.owner}`, { products: objects(w) })) },
    { name: `${upsertPath} (find-or-create)`, addsOnly: true, run: (w) => upsert(w, { id: w.owner, products: objects(w) }) },
    { name: `POST ${base}/{Entity}`, creates: true, addsOnly: true, run: async (w) => fromHttp(await w.user.post(`${base}/${w.entity}`, { ...newOwner(w.entity), productsIds: after(w) })) },
    { name: `POST ${base}/{Entity} (find-or-create)`, creates: true, addsOnly: true, run: async (w) => fromHttp(await w.user.post(`${base}/${w.entity}`, { ...newOwner(w.entity), products: objects(w) })) },
    { name: `${upsertPath} create (set-based)`, creates: true, addsOnly: true, run: (w) => upsert(w, { ...newOwner(w.entity), productsIds: after(w) }) },
    { name: `${upsertPath} create (single-record path)`, creates: true, addsOnly: true, single: true, run: (w) => upsert(w, { ...newOwner(w.entity), productsIds: after(w) }) },
    { name: `${base}/upsertAsync create (job)`, creates: true, addsOnly: true, run: (w) => upsertJob(w, { ...newOwner(w.entity), productsIds: after(w) }) },
  ];
}

/** Category and Brand with a write hook: their upserts take the single-record path. */
const hooks = definePlugin({
  name: 'owner-hooks',
  setup: (api) => {
    for (const entity of ['Category', 'Brand']) api.onRecord('afterUpdate', entity, () => undefined);
  },
});

/** How a refusal differs from the one expected (only what the route tells is compared). */
function mismatch(outcome: Outcome, expected: Refusal): string | undefined {
  if (outcome.stored) return 'stored the write';
  const details = expected.details === undefined ? undefined : (outcome.details ?? expected.details);
  const seen = { status: outcome.status ?? expected.status, code: outcome.code ?? expected.code, message: outcome.message, details };
  const want = { status: expected.status, code: expected.code, message: expected.message, details: expected.details };
  return JSON.stringify(seen) === JSON.stringify(want) ? undefined : `answered ${JSON.stringify(outcome)}`;
}

describe.each(TEST_DBS)('writes of a list from its other side, on every route, on %s', (kind) => {
  let plain: TestApi;
  let single: TestApi;
  beforeAll(async () => {
    // Jobs start at once: the job routes are among those compared, and no test here cancels one.
    plain = await startTestApi(kind, { entities: testEntities, jobs: { startDelayMs: 0 } });
    single = await startTestApi(kind, { entities: testEntities, plugins: [hooks], jobs: { startDelayMs: 0 } });
  });
  afterAll(async () => {
    await single?.close();
    await plain?.close();
  });

  const instanceOf = (route: Route) => (route.single ? single : plain);
  const users = new Map<string, Promise<UserClient>>();
  /** One user per instance and role. */
  const as = (t: TestApi, scopes: Record<string, Record<string, unknown>>) => {
    const key = `${t === single ? 'single' : 'plain'} ${JSON.stringify(scopes)}`;
    if (!users.has(key)) users.set(key, userWithRole(t, { scopes }));
    return users.get(key) as Promise<UserClient>;
  };
  let named = 0;
  const product = async (client: { post: TestApi['post'] }, body: Record<string, unknown> = {}) => {
    named += 1;
    const name = `Product ${named} ${kind}`;
    return { id: (await client.post('/api/Product', { name, ...body }).expect(200)).body.id as string, name };
  };
  const owner = async (t: TestApi, entity: Entity, productsIds: string[]) => (await t.post(`/api/${entity}`, { ...newOwner(entity), productsIds }).expect(200)).body.id as string;
  /** What a write may change: the product (its version and its changes), the owner's list, and how many owners there are. */
  const state = async (t: TestApi, { entity, owner: id, product: p }: Pick<ListWrite, 'entity' | 'owner' | 'product'>) => {
    const read = await t.get(`/api/Product/${p.id}`).expect(200);
    return {
      product: [read.headers.etag, read.body.categoriesIds, read.body.brandId, (await streamOf(t, 'Product', p.id)).length],
      owner: id ? (await t.get(`/api/${entity}/${id}`).expect(200)).body.productsIds : undefined,
      owners: (await t.get(`/api/${entity}?totalOnly=true`).expect(200)).body.total,
    };
  };

  /**
   * Sends one write of the list through every route that can send it; answers what went wrong:
   * a route that did not refuse as `expected` or stored something, or (`expected` undefined) one
   * that did not store the write.
   */
  async function throughEveryRoute(
    gen: 'A' | 'B',
    base: string,
    { entity, change, scopes, productOf, expected }: { entity: Entity; change: Change; scopes?: Record<string, Record<string, unknown>>; productOf: 'admin' | 'user'; expected?: Refusal },
  ): Promise<string[]> {
    const problems: string[] = [];
    for (const route of routes(gen, base)) {
      if (change === 'remove' && route.addsOnly) continue;
      const t = instanceOf(route);
      const user = scopes ? await as(t, scopes) : (t as unknown as UserClient);
      const p = await product(productOf === 'user' ? user : t);
      const before = change === 'remove' ? [p.id] : [];
      const id = route.creates ? undefined : await owner(t, entity, before);
      const write: ListWrite = { t, user, entity, owner: id, product: p, before: route.creates ? [] : before, change };
      const was = await state(t, write);
      const outcome = await route.run(write);
      const now = await state(t, write);
      if (expected) {
        const wrong = mismatch(outcome, expected);
        if (wrong) problems.push(`${route.name}: ${wrong}`);
        else if (JSON.stringify(now) !== JSON.stringify(was)) problems.push(`${route.name}: refused, but stored ${JSON.stringify({ was, now })}`);
      } else if (!outcome.stored) problems.push(`${route.name}: refused ${JSON.stringify(outcome)}`);
      else {
        const read = (await t.get(`/api/Product/${p.id}`).expect(200)).body;
        const linked = entity === 'Brand' ? read.brandId !== null : read.categoriesIds.length > 0;
        if (linked !== (change === 'add')) problems.push(`${route.name}: stored, but the product reads ${JSON.stringify(read)}`);
      }
    }
    return problems;
  }

  const ALL = { read: 'all', edit: 'all', create: true };

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    describe.each([['Category'], ['Brand']] as const)('%s.products', (entity) => {
      it.each(['add', 'remove'] as const)('%s: a role that may not edit Product at all is refused with 403 Not allowed to edit Product, and no product changes', async (change) => {
        const scopes = { Product: { read: 'all', edit: 'no', create: false }, Category: ALL, Brand: ALL };
        const expected = { status: 403, code: 'CORE_FORBIDDEN', message: 'Not allowed to edit Product' };
        expect(await throughEveryRoute(gen, base, { entity, change, scopes, productOf: 'admin', expected })).toEqual([]);
      });

      it.each(['add', 'remove'] as const)("%s: a role that edits its own products is refused another user's with 403 Not allowed to edit this Product", async (change) => {
        const scopes = { Product: { read: 'all', edit: 'own', create: true }, Category: ALL, Brand: ALL };
        const expected = { status: 403, code: 'CORE_FORBIDDEN', message: 'Not allowed to edit this Product' };
        expect(await throughEveryRoute(gen, base, { entity, change, scopes, productOf: 'admin', expected })).toEqual([]);
      });

      it.each(['add', 'remove'] as const)('%s: a role that edits its own products changes the list with them, on every route', async (change) => {
        const scopes = { Product: { read: 'all', edit: 'own', create: true }, Category: ALL, Brand: ALL };
        expect(await throughEveryRoute(gen, base, { entity, change, scopes, productOf: 'user' })).toEqual([]);
      });
    });

    it('judges only the pairs a write adds or removes: a list sent back as stored is taken from a role that may not edit Product, on every route (a mass update too)', async () => {
      const scopes = { Product: { read: 'all', edit: 'no', create: false }, Category: ALL, Brand: ALL };
      const user = await as(plain, scopes);
      const p = await product(plain);
      const upsertPath = gen === 'A' ? `${base}/upsert` : `${base}/MassActions/action/upsert`;
      for (const entity of ['Category', 'Brand'] as const) {
        const id = await owner(plain, entity, [p.id]);
        const was = await state(plain, { entity, owner: id, product: p });
        await user.patch(`${base}/${entity}/${id}`, { productsIds: [p.id], ...(entity === 'Category' && { name: `Renamed ${gen}` }) }).expect(200);
        expect((await user.post(upsertPath, [{ entity, payload: { id, productsIds: [p.id] } }]).expect(200)).body[0]).toMatchObject({ stored: true });
        // Adding what the list holds, or removing what it lacks, changes no product.
        await user.post(`${base}/${entity}/${id}/products`, { id: p.id }).expect(200);
        await user.del(`${base}/${entity}/${id}/products?id=not-linked`).expect(200);
        expect((await state(plain, { entity, owner: id, product: p })).product).toEqual(was.product);
        for (const change of [{ values: { productsIds: [p.id] } }, { addLinks: { products: [p.id] } }, { removeLinks: { products: ['not-linked'] } }]) {
          const res = await user.post(`${base}/entityMassUpdate`, { entityName: entity, ids: [id], ...change });
          expect([change, res.status, res.body]).toEqual([change, 200, { updated: 1, errors: [] }]);
          const job = (await user.post(`${base}/entityMassUpdate`, { entityName: entity, where: [{ type: 'equals', attribute: 'id', value: id }], ...change }).expect(200)).body.jobId as string;
          const ended = await finishedJob(plain, { base, id: job });
          expect([change, ended.status, ended.result]).toEqual([change, 'Success', expect.objectContaining({ updated: 1, errors: [] })]);
        }
        expect((await state(plain, { entity, owner: id, product: p })).product).toEqual(was.product);
        // A mass update that would change the list is refused for that record, as an update of it is.
        const other = await product(plain);
        for (const change of [{ values: { productsIds: [p.id, other.id] } }, { addLinks: { products: [other.id] } }, { removeLinks: { products: [p.id] } }]) {
          const res = await user.post(`${base}/entityMassUpdate`, { entityName: entity, ids: [id], ...change });
          expect([change, res.status, res.body]).toEqual([change, 200, { updated: 0, errors: [{ id, code: 'CORE_FORBIDDEN', message: 'Not allowed to edit Product' }] }]);
        }
        expect((await state(plain, { entity, owner: id, product: p })).product).toEqual(was.product);
      }
    });

    it('names the index a write from the other side breaks: 409 Product with the same brand, mpn, as from the product, on every route', async () => {
      const problems: string[] = [];
      const expected = { status: 409, code: 'CORE_UNIQUE_VIOLATION', message: 'Product with the same brand, mpn already exists', details: { entity: 'Product', fields: ['brand', 'mpn'] } };
      for (const route of routes(gen, base)) {
        const t = instanceOf(route);
        const mpn = `M-${route.name}-${gen}`;
        const [b1, b2] = [await owner(t, 'Brand', []), await owner(t, 'Brand', [])];
        const p1 = await product(t, { brandId: b1, mpn });
        const p2 = await product(t, { brandId: b2, mpn });
        // A new brand takes p1 and p2 together; a brand that holds p1 takes p2.
        const write: ListWrite = { t, user: t as unknown as UserClient, entity: 'Brand', owner: route.creates ? undefined : b1, product: p2, before: [p1.id], change: 'add' };
        const was = [await state(t, write), await state(t, { ...write, product: p1 })];
        const wrong = mismatch(await route.run(write), expected);
        if (wrong) problems.push(`${route.name}: ${wrong}`);
        else if (JSON.stringify([await state(t, write), await state(t, { ...write, product: p1 })]) !== JSON.stringify(was)) problems.push(`${route.name}: refused, but stored`);
      }
      expect(problems).toEqual([]);
      // The same collision written from the product's side.
      const mpn = `M-product-side-${gen}`;
      const [b1, b2] = [await owner(plain, 'Brand', []), await owner(plain, 'Brand', [])];
      await product(plain, { brandId: b1, mpn });
      const p2 = await product(plain, { brandId: b2, mpn });
      for (const res of [await plain.patch(`${base}/Product/${p2.id}`, { brandId: b1 }), await plain.post(`${base}/Product/${p2.id}/brand`, { id: b1 })]) {
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({ code: expected.code, message: expected.message, details: expected.details });
      }
    });
  });
});
