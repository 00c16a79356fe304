import { defineEntity, definePlugin, systemContext } from '@entity-records/core';
import { GENERATIONS, recordQueries, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';

/**
 * An update of simple columns on PostgreSQL is compared with the stored row by the database, in
 * one statement that also logs the change and reads the answer. Every test runs on both
 * databases: SQLite updates the usual way (read, compare, write), so the same answers and the
 * same logged changes on both show that the one statement does what the usual way does.
 */
const STARTS_COMPARED = /^with o as \(select /i;
const writes = (sql: string[]) => sql.filter((s) => /^(begin|commit|update|insert|delete|with)\b/i.test(s));

/** A type only the server writes, with a field that is neither read-only nor computed. */
const Reading = defineEntity({ name: 'Reading', serverWritten: true, fields: { value: { type: 'varchar' } } });

describe.each(TEST_DBS)('an update compared by the database on %s', (kind) => {
  let t: TestApi;
  let brandId: string;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [...testEntities, Reading], auth: { tokenCacheSeconds: 3600 } });
    brandId = (await t.post('/api/Brand', { name: 'Compared' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  const changes = async (id: string) =>
    ((await t.api.database.knex('record_change').where({ record_id: id }).orderBy('seq')) as { action: string; diff: string; user_id: string; owner_id: string }[]).map((c) => ({
      ...c,
      diff: JSON.parse(c.diff) as Record<string, { was: unknown; became: unknown }>,
    }));
  const create = async (body: Record<string, unknown>) => (await t.post('/api/Product', { brandId, ...body }).expect(200)).body.id as string;

  it.each(GENERATIONS)('logs the fields that changed, each as it was and as it became, in the order of the definition (generation %s)', async (_g, base) => {
    const id = await create({ name: 'Before', description: 'same', price: 12.5, quantity: 3, isActive: false, releaseDate: '2026-01-02', color: 'red', mpn: `m${base.length}` });
    const body = { color: 'blue', quantity: 3, releaseDate: '2027-12-31', price: 0.1 + 0.2, isActive: true, name: 'He said "hi" \\ ü 😀 \u0001 \'q\'', description: 'same', mpn: null };
    const sql = await recordQueries(t, () => t.patch(`${base}/Product/${id}`, body).expect(200));
    const [, update] = await changes(id);
    expect(update.action).toBe('Update');
    expect(update.diff).toEqual({
      name: { was: 'Before', became: body.name },
      mpn: { was: `m${base.length}`, became: null },
      price: { was: 12.5, became: 0.30000000000000004 },
      isActive: { was: false, became: true },
      releaseDate: { was: '2026-01-02', became: '2027-12-31' },
      color: { was: 'red', became: 'blue' },
    });
    // The order of the definition, whatever the body's.
    expect(Object.keys(update.diff)).toEqual(['name', 'mpn', 'price', 'isActive', 'releaseDate', 'color']);
    const { createdById } = (await t.get(`/api/Product/${id}`).expect(200)).body;
    expect(update).toMatchObject({ user_id: createdById, owner_id: createdById });
    if (kind === 'postgres') expect(writes(sql)).toEqual([expect.stringMatching(STARTS_COMPARED)]);
  });

  it.each(GENERATIONS)('answers the record as a read then shows it, with its new version, in one statement on PostgreSQL (generation %s)', async (_g, base) => {
    const id = await create({ name: 'Answer', price: 1 });
    const before = await t.get(`${base}/Product/${id}`).expect(200);
    let answer: { body: Record<string, unknown>; headers: Record<string, string> } | undefined;
    const sql = await recordQueries(t, async () => void (answer = await t.patch(`${base}/Product/${id}`, { price: 2, name: 'Answered' }).expect(200)));
    const read = await t.get(`${base}/Product/${id}`).expect(200);
    expect(answer!.body).toEqual(read.body);
    expect(answer!.body).toMatchObject({ price: 2, name: 'Answered', brandName: 'Compared' });
    expect(answer!.headers.etag).toBe(read.headers.etag);
    expect(answer!.headers.etag).not.toBe(before.headers.etag);
    // One statement writes, logs and reads the record; only the multiple links are read after it.
    if (kind === 'postgres') expect(sql.filter((s) => !/^select .* from "category_products__/is.test(s))).toEqual([expect.stringMatching(STARTS_COMPARED)]);
  });

  it('answers an update equal in every field with the record as stored, at its version, and logs nothing', async () => {
    const id = await create({ name: 'Equal', price: 4.5, color: 'green' });
    const before = await t.get(`/api/Product/${id}`).expect(200);
    const { body, headers } = await t.patch(`/api/Product/${id}`, { price: 4.5, color: 'green', name: 'Equal' }).expect(200);
    expect(body).toEqual(before.body);
    expect(headers.etag).toBe(before.headers.etag);
    expect(await changes(id)).toHaveLength(1);
  });

  it('answers 404 for a missing or deleted record and logs nothing', async () => {
    await t.patch('/api/Product/no-such-product', { price: 1 }).expect(404);
    const id = await create({ name: 'Deleted' });
    await t.del(`/api/Product/${id}`).expect(200);
    await t.patch(`/api/Product/${id}`, { price: 1 }).expect(404);
    expect((await changes(id)).map((c) => c.action)).toEqual(['Create', 'Delete']);
    expect(await t.api.database.knex('record_change').where({ record_id: 'no-such-product' })).toEqual([]);
  });

  it('refuses a unique value another record holds (409) and changes nothing', async () => {
    await create({ name: 'Holder', sku: 'compared-taken' });
    const id = await create({ name: 'Taker', sku: 'compared-free' });
    const res = await t.patch(`/api/Product/${id}`, { sku: 'compared-taken', price: 9 }).expect(409);
    expect(res.body.code ?? res.body.error?.code).toBe('CORE_UNIQUE_VIOLATION');
    expect((await t.get(`/api/Product/${id}`).expect(200)).body).toMatchObject({ sku: 'compared-free', price: null });
    expect(await changes(id)).toHaveLength(1);
  });

  it('leaves the usual way to what needs the stored record: If-Match, a caller who edits only own records, a read-only field, a link', async () => {
    const id = await create({ name: 'Usual' });
    const etag = (await t.get(`/api/Product/${id}`).expect(200)).headers.etag as string;
    await t.patch(`/api/Product/${id}`, { price: 1 }).set('If-Match', '"999"').expect(412);
    const matched = await recordQueries(t, () => t.patch(`/api/Product/${id}`, { price: 2 }).set('If-Match', etag).expect(200));
    const owner = await userWithRole(t, { scopes: { Product: { create: true, read: 'all', edit: 'own' } } });
    await owner.patch(`/api/Product/${id}`, { price: 3 }).expect(403);
    const own = (await owner.post('/api/Product', { name: 'Own' }).expect(200)).body.id as string;
    const ownSql = await recordQueries(t, () => owner.patch(`/api/Product/${own}`, { price: 3 }).expect(200));
    await t.patch(`/api/Product/${id}`, { internalNote: 'no' }).expect(400);
    const linked = await recordQueries(t, () => t.patch(`/api/Product/${id}`, { brandId: null, price: 4 }).expect(200));
    expect((await t.get(`/api/Product/${id}`).expect(200)).body).toMatchObject({ price: 4, brandId: null });
    expect((await changes(id)).map((c) => Object.keys(c.diff))).toEqual([expect.any(Array), ['price'], ['price', 'brandId']]);
    if (kind === 'postgres') for (const sql of [matched, ownSql, linked]) expect(sql.some((s) => STARTS_COMPARED.test(s))).toBe(false);
  });

  it.each(GENERATIONS)('refuses an update of a type the server writes alone (403), even to an admin, and writes nothing (generation %s)', async (_g, base) => {
    const { id } = await t.api.repository('Reading').create(systemContext(), { value: 'measured' });
    const res = await t.patch(`${base}/Reading/${id}`, { value: 'forged' }).expect(403);
    expect(JSON.stringify(res.body)).toContain('written by the server only');
    expect((await t.get(`${base}/Reading/${id}`).expect(200)).body).toMatchObject({ value: 'measured' });
    expect((await changes(id)).map((c) => c.action)).toEqual(['Create']);
  });

  it('refuses a field the role may not edit (403) as the usual way does, and writes nothing', async () => {
    const id = await create({ name: 'Locked', price: 1 });
    const user = await userWithRole(t, { scopes: { Product: { create: true, read: 'all', edit: 'all' } }, fields: { Product: { price: { read: true, edit: false } } } });
    await user.patch(`/api/Product/${id}`, { price: 2 }).expect(403);
    const sql = await recordQueries(t, () => user.patch(`/api/Product/${id}`, { name: 'Unlocked' }).expect(200));
    expect((await t.get(`/api/Product/${id}`).expect(200)).body).toMatchObject({ price: 1, name: 'Unlocked' });
    if (kind === 'postgres') expect(writes(sql)).toEqual([expect.stringMatching(STARTS_COMPARED)]);
  });
});

describe.each(TEST_DBS)('an update with a before-update hook on %s', (kind) => {
  let t: TestApi;
  const seen: unknown[] = [];
  beforeAll(async () => {
    const hook = definePlugin({ name: 'sees-existing', setup: (api) => api.onRecord('beforeUpdate', 'Product', ({ existing }) => void seen.push(existing)) });
    t = await startTestApi(kind, { entities: testEntities, plugins: [hook] });
  });
  afterAll(() => t.close());

  it('goes the usual way: the hook gets the stored record', async () => {
    const id = (await t.post('/api/Product', { name: 'Hooked', price: 1 }).expect(200)).body.id;
    const sql = await recordQueries(t, () => t.patch(`/api/Product/${id}`, { price: 2 }).expect(200));
    expect(seen).toEqual([expect.objectContaining({ id, price: 1 })]);
    expect(sql.some((s) => STARTS_COMPARED.test(s))).toBe(false);
  });
});
