import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole, type UserClient } from '../../../../test/support/users';

jest.setTimeout(60_000);

const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * An upsert item that looked its key up, found nothing and was about to create the record, while
 * another request stored a record with that key first (CONTRACT §6: no two records; §15: the item
 * is then the update of that record, and its rules are an update's). Made certain on PostgreSQL:
 * another client of the database inserts the record and holds its transaction open while the
 * upsert's insert waits for it. SQLite writes one transaction at a time, so there the lookup
 * always sees a committed record.
 */
describePg('an upsert that loses its create to another request, on postgres', () => {
  let t: TestApi;
  let adminId: string;
  /** May create products and read them all, but edit none. */
  let creator: UserClient;
  beforeAll(async () => {
    t = await startTestApi('postgres', { entities: testEntities });
    adminId = (await t.get('/api/v1/App/user').expect(200)).body.user.id;
    creator = await userWithRole(t, { scopes: { Product: { create: true, read: 'all', edit: 'no', delete: 'no' } } });
  });
  afterAll(() => t.close());

  /**
   * Sends the upsert while another transaction holds a new product with `sku`, created and last
   * modified by `by`; commits that transaction once the upsert waits for it. Answers the upsert's
   * one result and the product as stored afterwards.
   */
  async function racedUpsert(upsert: () => PromiseLike<{ body: unknown }>, { sku, by }: { sku: string; by: string }) {
    // A stored row to copy every column from (the other request's row differs in id, key and author).
    const templateId = (await t.post('/api/Product', { name: 'template', sku: `template-${sku}` }).expect(200)).body.id;
    const template = await t.api.database.knex('product').where({ id: templateId }).first();
    const trx = await t.api.database.knex.transaction();
    try {
      const id = `other-${sku}`;
      await trx('product').insert({ ...template, id, sku, name: 'stored by another request', created_by_id: by, modified_by_id: by });
      // A supertest request starts when it is awaited: `then` sends it now.
      const answer = upsert().then((res) => res);
      // The upsert looks the sku up (nothing committed holds it) and waits at its insert.
      await sleep(500);
      await trx.commit();
      const [result] = (await answer).body as { status: string; message?: string; entity?: Record<string, unknown> }[];
      const stored = (await t.get(`/api/Product?where[0][type]=equals&where[0][attribute]=sku&where[0][value]=${sku}`).expect(200)).body;
      return { result, stored, id };
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
  }

  it.each(GENERATIONS)('updates the record the other request stored, as the caller modifying it (generation %s)', async (g) => {
    const path = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
    const sku = `LOST-${g}`;
    const { result, stored, id } = await racedUpsert(() => t.post(path, [{ entity: 'Product', payload: { sku, name: 'from the upsert' } }]).expect(200), { sku, by: creator.user.id });
    expect(result).toMatchObject({ status: 'Updated', stored: true, entity: { id, sku, name: 'from the upsert', modifiedById: adminId, createdById: creator.user.id } });
    expect(stored.total).toBe(1);
    expect(stored.list[0]).toMatchObject({ id, name: 'from the upsert', modifiedById: adminId });
  });

  it.each(GENERATIONS)('fails the item of a caller who may create but not edit, as it fails against a stored record (generation %s)', async (g) => {
    const path = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
    const sku = `LOST-EDIT-${g}`;
    // The answer to the same item when the record is stored before the upsert looks it up.
    await t.post('/api/Product', { name: 'stored first', sku: `${sku}-first` }).expect(200);
    const [expected] = (await creator.post(path, [{ entity: 'Product', payload: { sku: `${sku}-first`, name: 'from the upsert' } }]).expect(200)).body;
    expect(expected).toMatchObject({ status: 'Failed', stored: false });
    const { result, stored } = await racedUpsert(() => creator.post(path, [{ entity: 'Product', payload: { sku, name: 'from the upsert' } }]).expect(200), { sku, by: adminId });
    expect(result).toEqual(expected);
    expect(stored.total).toBe(1);
    expect(stored.list[0]).toMatchObject({ name: 'stored by another request', modifiedById: adminId });
  });

  // A segment that changes a multiple link is locked from its first try: its insert skips a key
  // taken meanwhile inside the transaction (a savepoint) instead of deciding the segment again.
  it.each(GENERATIONS)('updates the record the other request stored when the item links categories too (generation %s)', async (g) => {
    const path = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
    const sku = `LOST-LINKS-${g}`;
    const category = (await t.post('/api/Category', { name: `Lost ${g}`, code: `lost-${g}` }).expect(200)).body.id;
    const item = { entity: 'Product', payload: { sku, name: 'from the upsert', categoriesIds: [category] } };
    const { result, stored, id } = await racedUpsert(() => t.post(path, [item]).expect(200), { sku, by: creator.user.id });
    expect(result).toMatchObject({ status: 'Updated', stored: true, entity: { id, sku, name: 'from the upsert', categoriesIds: [category], modifiedById: adminId } });
    expect(stored.total).toBe(1);
    expect((await t.get(`/api/Product/${id}`).expect(200)).body.categoriesIds).toEqual([category]);
  });
});
