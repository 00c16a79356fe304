import { definePlugin } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { linkTargets, streamOf } from '../../../../test/support/link-targets';

/** A route whose transaction the database keeps ending, as a deadlock that outlasts every try of a write would. */
const alwaysDeadlocked = definePlugin({
  name: 'always-deadlocked',
  setup(api) {
    api.addRoutes((router) => {
      router.post('/alwaysDeadlocked', () => {
        throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      });
    });
  },
});

/**
 * Writes other than updates that lock the same rows in different orders: creates that link
 * records (whose versions they count up) and permanent deletes of linked records. On PostgreSQL
 * the database ends one of two such transactions to break the deadlock; the write is then run
 * again, and one that never gets through is 503 with Retry-After, never a 500.
 */
describe.each(TEST_DBS)('writes that deadlock on %s', (kind) => {
  // Deadlocks on cue need row locks: SQLite runs one writer at a time and has no such test.
  const onPostgres = (cases: typeof GENERATIONS) => (kind === 'postgres' ? it.each(cases) : () => undefined);
  let t: TestApi;
  let cats: string[];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, poolSize: 20, plugins: [alwaysDeadlocked] });
    cats = (await linkTargets(t, { prefix: 'Deadlock', categories: 4, brands: 0 })).cats;
  });
  afterAll(() => t.close());

  const answers = (list: { status: number; body: unknown }[]) => list.map((r) => (r.status >= 500 ? [r.status, r.body] : r.status));
  let serial = 0;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('creates of products linking the same categories in opposite orders, and of categories linking the same products: all 200, each category lists them', async () => {
      for (let round = 0; round < 6; round++) {
        const targets = (await linkTargets(t, { prefix: `Crossed${(serial += 1)}`, categories: 4, brands: 0 })).cats;
        const products = await Promise.all([0, 1, 2].map(async () => (await t.post(`${base}/Product`, { name: 'Linked' }).expect(200)).body.id as string));
        const sent = await Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            i % 3 === 2
              ? t.post(`${base}/Category`, { name: 'New', code: `dl-${(serial += 1)}`, productsIds: i % 2 ? products : [...products].reverse() })
              : t.post(`${base}/Product`, { name: 'New', categoriesIds: i % 2 ? targets : [...targets].reverse() }),
          ),
        );
        expect(answers(sent)).toEqual(sent.map(() => 200));
        const made = sent.filter((r) => r.body.categoriesIds).map((r) => r.body.id as string);
        for (const category of targets) {
          const listed = (await t.get(`/api/v1/Category/${category}/products?select=id&maxSize=200`).expect(200)).body.list.map((p: { id: string }) => p.id);
          expect(listed).toEqual(expect.arrayContaining(made));
        }
        expect((await t.get(`${base}/Product/${products[0]}`).expect(200)).body.categoriesIds).toHaveLength(sent.length - made.length);
      }
    });
  });

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('mass updates and upserts that link products and categories from both sides at once: all 200, nothing failed, every list symmetric', async () => {
      for (let round = 0; round < 4; round++) {
        const targets = (await linkTargets(t, { prefix: `Batch${(serial += 1)}`, categories: 3, brands: 0 })).cats;
        const products = await Promise.all([0, 1, 2].map(async () => (await t.post(`${base}/Product`, { name: 'Batched' }).expect(200)).body.id as string));
        const send = (i: number) => {
          const [some, others] = i % 2 ? [products, targets] : [[...products].reverse(), [...targets].reverse()];
          if (i % 3 === 0) return t.post(`${base}/entityMassUpdate`, { entityName: 'Category', ids: others, addLinks: { products: some }, removeLinks: { products: some.slice(0, 1) } });
          if (i % 3 === 1) return t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: some, values: { price: i }, addLinks: { categories: others } });
          return t.post(`${base}/upsert`, some.map((id) => ({ entity: 'Product', payload: { id, categoriesIds: others.slice(i % 3) } })));
        };
        const sent = await Promise.all(Array.from({ length: 24 }, (_, i) => send(i)));
        expect(answers(sent)).toEqual(sent.map(() => 200));
        for (const r of sent) expect(Array.isArray(r.body) ? r.body.filter((x: { status: string }) => x.status === 'Failed') : r.body.errors).toEqual([]);
        for (const product of products) {
          const linked = (await t.get(`/api/Product/${product}`).expect(200)).body.categoriesIds as string[];
          for (const category of targets) {
            const listed = (await t.get(`/api/Category/${category}`).expect(200)).body.productsIds as string[];
            expect(listed.includes(product)).toBe(linked.includes(category));
          }
        }
      }
    });
  });

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('products linked to brands while they are deleted and restored: every version of a product is one change of its stream', async () => {
      const brands = (await linkTargets(t, { prefix: `Moving${(serial += 1)}`, categories: 0, brands: 2 })).brands;
      const products = await Promise.all(Array.from({ length: 8 }, async () => (await t.post(`${base}/Product`, { name: 'Moved' }).expect(200)).body.id as string));
      for (let round = 0; round < 8; round++) {
        const sent = await Promise.all(
          products.flatMap((id, i) => [
            t.post(`${base}/Brand/${brands[(i + round) % 2]}/products`, { id }),
            t.patch(`${base}/Brand/${brands[(i + round + 1) % 2]}`, { productsIds: products.filter((_, j) => j % 2 === round % 2) }),
            round % 2 ? t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [id] }) : t.del(`${base}/Product/${id}`),
          ]),
        );
        expect(sent.filter((r) => r.status >= 500).map((r) => [r.status, r.body])).toEqual([]);
      }
      const { knex } = t.api.database;
      for (const id of products) {
        const [{ record_version: version }] = await knex('product').select('record_version').where({ id });
        expect([id, await knex('record_change').where({ record_id: id }).count({ n: '*' }).first().then((r) => Number(r?.n))]).toEqual([id, Number(version)]);
      }
    });
  });

  // A deadlock on cue: the test locks a category, the create of a product with a chosen id links
  // it and waits, then the test inserts a row of that id and waits for the create. The database
  // ends the create's transaction (it waited first); the create runs again once the test lets go.
  onPostgres(GENERATIONS)('generation %s: a create that the database ended to break a deadlock is run again: 200, linked once', async (_g, base) => {
    const { knex } = t.api.database;
    const id = `deadlock-${(serial += 1)}`;
    const trx = await knex.transaction();
    await trx('category').select('id').where({ id: cats[0] }).forUpdate();
    const sent = t.post(`${base}/Product`, { id, name: 'Ended once', categoriesIds: [cats[0]] }).then((r) => r);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await trx('product').insert({ id });
    await trx.rollback();
    const answer = await sent;
    expect([answer.status, answer.body.categoriesIds]).toEqual([200, [cats[0]]]);
    expect((await streamOf(t, 'Product', id)).map((c) => c.action)).toEqual(['Create']);
  });

  onPostgres(GENERATIONS)('generation %s: a permanent delete that the database ended to break a deadlock is run again: true, logged once', async (_g, base) => {
    const { knex } = t.api.database;
    const parent = (await t.post('/api/Category', { name: 'Parent', code: `parent-${(serial += 1)}` }).expect(200)).body.id as string;
    const child = (await t.post('/api/Category', { name: 'Child', code: `child-${serial}`, parentId: parent }).expect(200)).body.id as string;
    // The delete locks the parent, then waits to unlink the child, which the test holds; the test then waits for the parent.
    const trx = await knex.transaction();
    await trx('category').select('id').where({ id: child }).forUpdate();
    const sent = t.del(`${base}/Category/${parent}`).set('permanently', 'true').then((r) => r);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await trx('category').select('id').where({ id: parent }).forUpdate();
    await trx.rollback();
    const answer = await sent;
    expect([answer.status, answer.body]).toEqual([200, true]);
    expect((await t.get(`/api/Category/${child}`).expect(200)).body.parentId).toBeNull();
    expect(await knex('record_change').where({ record_id: parent, action: 'Delete' })).toHaveLength(1);
  });

  onPostgres(GENERATIONS)('generation %s: a deadlock that outlasts the tries of a write is 503 CORE_BUSY with Retry-After, never a 500', async (_g, base) => {
    const answer = await t.post(`${base}/alwaysDeadlocked`, {});
    expect([answer.status, answer.body.error?.code, answer.headers['retry-after']]).toEqual([503, 'CORE_BUSY', '1']);
    expect(JSON.stringify(answer.body)).not.toContain('deadlock detected');
  });

  it('a create that links records counts their versions up and logs one change per record', async () => {
    const before = (await t.get(`/api/Category/${cats[0]}`).expect(200)).headers.etag;
    const created = await t.post('/api/Product', { name: 'Versions', categoriesIds: cats }).expect(200);
    expect((await t.get(`/api/Category/${cats[0]}`).expect(200)).headers.etag).not.toBe(before);
    expect((await streamOf(t, 'Category', cats[0])).filter((c) => c.action === 'Relate' && (c.diff.productsIds?.became as string[]).includes(created.body.id))).toHaveLength(1);
  });
});
