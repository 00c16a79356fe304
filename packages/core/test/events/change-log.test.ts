import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';
import { delegatedToken, clientFor, userWithRole } from '../../../../test/support/users';

type Change = { id: string; action: string; diff: Record<string, { was: unknown; became: unknown }>; userId: string | null; userName: string | null; actor?: { id: string; name: string | null }; createdAt: string };

/** Every write route stores one change per record it changes, in its transaction (CONTRACT §16). */
describe.each(TEST_DBS)('the change log on %s', (kind) => {
  let t: TestApi;
  let adminId: string;
  let cats: string[];
  let brand: string;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    adminId = (await t.get('/api/v1/App/user').expect(200)).body.user.id;
    cats = [];
    for (let i = 0; i < 3; i++) cats.push((await t.post('/api/Category', { name: `C${i}`, code: `log-c${i}` }).expect(200)).body.id);
    brand = (await t.post('/api/Brand', { name: 'Log brand' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  /** The changes of a record, oldest first. */
  const changesOf = async (entity: string, id: string): Promise<Change[]> => {
    const res = await t.get(`/api/v1/${entity}/${id}/stream?maxSize=200`).expect(200);
    expect(res.body.total).toBe(res.body.list.length);
    return [...res.body.list].reverse();
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('logs a create with the values it set, then each update with what changed, and nothing for a write that changes nothing', async () => {
      const created = (await t.post(`${base}/Product`, { name: 'Logged', price: 2, categoriesIds: [cats[0]] }).expect(200)).body;
      await t.patch(`${base}/Product/${created.id}`, { price: 3, name: 'Logged' }).expect(200);
      await t.put(`${base}/Product/${created.id}`, { price: 3 }).expect(200);
      await t.patch(`${base}/Product/${created.id}`, { categoriesIds: [cats[1], cats[0]], brandId: brand }).expect(200);
      const changes = await changesOf('Product', created.id);
      expect(changes.map((c) => c.action)).toEqual(['Create', 'Update', 'Update']);
      const [create, price, links] = changes;
      expect(create.diff).toMatchObject({ name: { was: null, became: 'Logged' }, price: { was: null, became: 2 }, categoriesIds: { was: [], became: [cats[0]] }, isActive: { was: null, became: true } });
      expect(price.diff).toEqual({ price: { was: 2, became: 3 } });
      expect(links.diff).toEqual({ brandId: { was: null, became: brand }, categoriesIds: { was: [cats[0]], became: [cats[1], cats[0]] } });
      for (const c of changes) {
        expect(c).toMatchObject({ userId: adminId, userName: expect.any(String) });
        expect(c.actor).toBeUndefined();
        expect(c.createdAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      }
      expect(Number(changes[2].id)).toBeGreaterThan(Number(changes[1].id));
    });

    it('logs deletes and restores; a failed write logs nothing', async () => {
      const id = (await t.post(`${base}/Product`, { name: 'Doomed' }).expect(200)).body.id;
      await t.patch(`${base}/Product/${id}`, { price: -1 }).expect(400);
      await t.patch(`${base}/Product/${id}`, { brandId: 'missing' }).expect(400);
      await t.del(`${base}/Product/${id}`).expect(200);
      await t.post('/api/entityRestore', { entityName: 'Product', ids: [id] }).expect(200);
      expect((await changesOf('Product', id)).map((c) => [c.action, c.diff])).toEqual([
        ['Create', expect.objectContaining({ name: { was: null, became: 'Doomed' } })],
        ['Delete', {}],
        ['Restore', {}],
      ]);
    });

    it('logs Relate and Unrelate for the link routes, on both records of a many-to-many link', async () => {
      const id = (await t.post(`${base}/Product`, { name: 'Linked' }).expect(200)).body.id;
      await t.post(`${base}/Product/${id}/categories`, { ids: [cats[0], cats[1]] }).expect(200, 'true');
      await t.post(`${base}/Product/${id}/categories`, { id: cats[0] }).expect(200, 'true');
      await t.del(`${base}/Product/${id}/categories?id=${cats[0]}`).expect(200, 'true');
      await t.del(`${base}/Product/${id}/categories`).send({ id: cats[2] }).expect(200, 'true');
      const changes = await changesOf('Product', id);
      expect(changes.map((c) => [c.action, c.diff])).toEqual([
        ['Create', expect.any(Object)],
        ['Relate', { categoriesIds: { was: [], became: [cats[0], cats[1]] } }],
        ['Unrelate', { categoriesIds: { was: [cats[0], cats[1]], became: [cats[1]] } }],
      ]);
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body.categoriesIds).toEqual([cats[1]]);
    });
  });

  it.each(GENERATIONS)('logs a multiple link of a Create as id sets, was the empty set, on every route that creates (generation %s)', async (g, base) => {
    const upsertPath = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
    const item = (payload: Record<string, unknown>) => ({ entity: 'Product', payload });
    const posted = (await t.post(`${base}/Product`, { name: `Set ${g}`, categoriesIds: [cats[0], cats[1]] }).expect(200)).body.id;
    // The list of a one-to-many link, written from its "many" side.
    const brandOf = (await t.post(`${base}/Brand`, { name: `Set brand ${g}`, productsIds: [posted] }).expect(200)).body.id;
    // A batch of new records only (on PostgreSQL the insert may log such a batch itself), then a
    // batch that mixes a new record with an item that links it afterwards (one merged Create).
    const batch = (await t.post(upsertPath, [item({ sku: `set-a-${g}`, name: 'A', categoriesIds: [cats[2]] }), item({ sku: `set-b-${g}`, name: 'B', categoriesIds: [cats[0]] })]).expect(200)).body;
    const mixed = (await t.post(upsertPath, [item({ sku: `set-c-${g}`, name: 'C' }), item({ sku: `set-c-${g}`, categoriesIds: [cats[1]] })]).expect(200)).body;
    const { jobId } = (await t.post(`${base}/upsertAsync`, [item({ sku: `set-d-${g}`, name: 'D', categoriesIds: [cats[2], cats[0]] })]).expect(200)).body;
    const job = await finishedJob(t, { base, id: jobId });
    const expected: [string, string, string, string[]][] = [
      ['Product', posted, 'categoriesIds', [cats[0], cats[1]]],
      ['Brand', brandOf, 'productsIds', [posted]],
      ['Product', batch[0].entity.id, 'categoriesIds', [cats[2]]],
      ['Product', batch[1].entity.id, 'categoriesIds', [cats[0]]],
      ['Product', mixed[0].entity.id, 'categoriesIds', [cats[1]]],
      ['Product', job.result[0].entity.id, 'categoriesIds', [cats[2], cats[0]]],
    ];
    for (const [entity, id, key, became] of expected) {
      // The stream of both bases and both routes shows the diff as stored.
      for (const path of [`${base}/entityStream?entityName=${entity}&id=${id}`, `/api/v1/${entity}/${id}/stream`]) {
        const list = (await t.get(path).expect(200)).body.list as Change[];
        const create = list.find((c) => c.action === 'Create') as Change;
        expect([entity, key, create.diff[key]]).toEqual([entity, key, { was: [], became }]);
      }
    }
  });

  it('logs set-based writes: upsert creates and updates, not unchanged items; a mass update once per record, values and links together', async () => {
    const items = [{ sku: 'log-u1', name: 'U1' }, { sku: 'log-u2', name: 'U2' }];
    const first = (await t.post('/api/upsert', [...items.map((i) => ({ entity: 'Product', payload: i }))]).expect(200)).body;
    const ids: string[] = first.map((r: { entity: { id: string } }) => r.entity.id);
    await t.post('/api/upsert', [{ entity: 'Product', payload: { sku: 'log-u1', name: 'U1' } }, { entity: 'Product', payload: { sku: 'log-u2', name: 'U2 changed' } }]).expect(200);
    await t.post('/api/entityMassUpdate', { entityName: 'Product', ids, values: { quantity: 7 }, addLinks: { categories: [cats[2]] } }).expect(200);
    await t.post('/api/entityMassUpdate', { entityName: 'Product', ids, removeLinks: { categories: [cats[2]] } }).expect(200);
    const [one, two] = [await changesOf('Product', ids[0]), await changesOf('Product', ids[1])];
    // values and links together are one Update; links removed alone an Unrelate
    expect(one.map((c) => c.action)).toEqual(['Create', 'Update', 'Unrelate']);
    expect(two.map((c) => c.action)).toEqual(['Create', 'Update', 'Update', 'Unrelate']);
    expect(two[1].diff).toEqual({ name: { was: 'U2', became: 'U2 changed' } });
    expect(one[1].diff).toEqual({ quantity: { was: null, became: 7 }, categoriesIds: { was: [], became: [cats[2]] } });
    expect(one[2].diff).toEqual({ categoriesIds: { was: [cats[2]], became: [] } });
  });

  it.each(GENERATIONS)('logs one change per record of a batch, as its version moves once (generation %s)', async (g, base) => {
    const path = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
    const stored = (await t.post(`${base}/Product`, { name: `Twice ${g}`, sku: `log-twice-${g}`, price: 1, quantity: 4 }).expect(200)).body.id;
    const item = (payload: Record<string, unknown>) => ({ entity: 'Product', payload });
    const answer = (
      await t
        .post(path, [
          item({ sku: `log-twice-${g}`, price: 2, quantity: 5 }),
          item({ sku: `log-new-${g}`, name: 'Born', price: 1 }),
          item({ sku: `log-twice-${g}`, price: 3, quantity: 4 }),
          item({ sku: `log-new-${g}`, price: 9 }),
          item({ sku: `log-back-${g}`, name: 'Back' }),
        ])
        .expect(200)
    ).body;
    expect(answer.map((r: { status: string }) => r.status)).toEqual(['Updated', 'Created', 'Updated', 'Updated', 'Created']);
    // Sent alone, each item would answer the same, with the record as that item left it.
    expect(answer[0].entity).toMatchObject({ price: 2, quantity: 5 });
    expect(answer[2].entity).toMatchObject({ price: 3, quantity: 4 });
    const changes = await changesOf('Product', stored);
    expect(changes.map((c) => [c.action, c.diff])).toEqual([
      ['Create', expect.anything()],
      // quantity went 4 → 5 → 4: it drops out
      ['Update', { price: { was: 1, became: 3 } }],
    ]);
    expect((await t.get(`${base}/Product/${stored}`).expect(200)).headers.etag).toBe('"2"');
    const born = answer[1].entity.id;
    const bornChanges = await changesOf('Product', born);
    expect(bornChanges.map((c) => c.action)).toEqual(['Create']);
    expect(bornChanges[0].diff).toMatchObject({ name: { was: null, became: 'Born' }, price: { was: null, became: 9 } });
    expect((await t.get(`${base}/Product/${born}`).expect(200)).headers.etag).toBe('"1"');
  });

  it('logs each new record of a batch with every value it set as the API shows it, awkward text and numbers included', async () => {
    // On PostgreSQL these diffs are made by the statement that inserts the batch, from its rows
    // (the items set the same fields: a batch of new records, as an import sends).
    const payloads = [
      { sku: 'log-awk-1', name: 'He said "hi" \\ ü 😀 \u0001 \'q\' ?', price: 0.1 + 0.2, quantity: -3, isActive: false, releaseDate: '2026-02-28', color: 'red', mpn: '', description: 'line\nbreak\ttab', brandId: brand },
      { sku: 'log-awk-2', name: '{"was":1}', price: 1e21, quantity: null, isActive: true, releaseDate: null, color: null, mpn: null, description: null, brandId: null },
    ];
    const answer = (await t.post('/api/upsert', payloads.map((payload) => ({ entity: 'Product', payload }))).expect(200)).body;
    expect(answer.map((r: { status: string }) => r.status)).toEqual(['Created', 'Created']);
    for (const [i, payload] of payloads.entries()) {
      const [created] = await changesOf('Product', answer[i].entity.id);
      expect(created.action).toBe('Create');
      const record = (await t.get(`/api/Product/${answer[i].entity.id}`).expect(200)).body;
      for (const key of Object.keys(payload)) expect(created.diff[key]).toEqual({ was: null, became: record[key] });
      expect(created.diff.isActive).toEqual({ was: null, became: record.isActive });
    }
  });

  it('logs a batch whose changes differ in action and owner with each change its own', async () => {
    const u = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'all' } } });
    const theirs = (await u.post('/api/Product', { name: 'Theirs', sku: 'log-mixed-theirs' }).expect(200)).body.id;
    const answer = (
      await t
        .post('/api/upsert', [
          { entity: 'Product', payload: { sku: 'log-mixed-theirs', name: 'Theirs, changed' } },
          { entity: 'Product', payload: { sku: 'log-mixed-mine', name: 'Mine' } },
        ])
        .expect(200)
    ).body;
    expect(answer.map((r: { status: string }) => r.status)).toEqual(['Updated', 'Created']);
    const mine = answer[1].entity.id;
    expect((await changesOf('Product', theirs)).map((c) => c.action)).toEqual(['Create', 'Update']);
    expect((await changesOf('Product', mine)).map((c) => c.action)).toEqual(['Create']);
    const owners = await t.api.database.knex('record_change').select('record_id', 'action', 'owner_id', 'user_id').whereIn('record_id', [theirs, mine]).orderBy('seq');
    expect(owners).toEqual([
      { record_id: theirs, action: 'Create', owner_id: u.user.id, user_id: u.user.id },
      { record_id: theirs, action: 'Update', owner_id: u.user.id, user_id: adminId },
      { record_id: mine, action: 'Create', owner_id: adminId, user_id: adminId },
    ]);
  });

  it('names the admin as actor in a delegated session, and the user as the one who changed', async () => {
    const u = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'all', stream: true } } });
    const delegated = clientFor(t, await delegatedToken(t, ADMIN.userName, ADMIN.password, u.user.userName), u.user);
    const id = (await delegated.post('/api/Product', { name: 'For someone' }).expect(200)).body.id;
    const [create] = await changesOf('Product', id);
    expect(create).toMatchObject({ userId: u.user.id, actor: { id: adminId, name: expect.any(String) } });
  });
});
