import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { clientFor, delegatedToken, userWithRole, type UserClient } from '../../../../test/support/users';

type Item = { id: string; action: string; diff: Record<string, { was: unknown; became: unknown }>; userId: string | null; userName: string | null; actor?: { id: string; name: string | null }; createdAt: string };

const ITEM_KEYS = ['action', 'createdAt', 'diff', 'id', 'userId', 'userName'];

/** A record's stream (CONTRACT §16): `entityStream` and `/{Entity}/{id}/stream`, each under both bases. */
describe.each(TEST_DBS)('the stream of a record on %s', (kind) => {
  let t: TestApi;
  let adminId: string;
  let cats: string[];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    adminId = (await t.get('/api/v1/App/user').expect(200)).body.user.id;
    cats = [];
    for (let i = 0; i < 3; i++) cats.push((await t.post('/api/Category', { name: `S${i}`, code: `stream-c${i}` }).expect(200)).body.id);
  });
  afterAll(() => t.close());

  /** The four paths of one record's stream. */
  const streamPaths = (entity: string, id: string, query = '') => [
    `/api/entityStream?entityName=${entity}&id=${id}${query && `&${query}`}`,
    `/api/v1/entityStream?entityName=${entity}&id=${id}${query && `&${query}`}`,
    `/api/v1/${entity}/${id}/stream${query && `?${query}`}`,
    `/api/${entity}/${id}/stream${query && `?${query}`}`,
  ];

  /** A product written `updates` times after its create (price 1, 2, …). */
  const productWith = async (updates: number, by: Pick<UserClient, 'post' | 'patch'> = t) => {
    const id = (await by.post('/api/Product', { name: 'Streamed', price: 0 }).expect(200)).body.id as string;
    for (let i = 1; i <= updates; i++) await by.patch(`/api/Product/${id}`, { price: i }).expect(200);
    return id;
  };

  describe.each(GENERATIONS)('written through generation %s', (_g, base) => {
    it('answers {total, list}, newest first, each item with exactly the keys of the contract, on every path', async () => {
      const id = (await t.post(`${base}/Product`, { name: 'Shape', price: 1 }).expect(200)).body.id;
      await t.patch(`${base}/Product/${id}`, { price: 2 }).expect(200);
      await t.put(`${base}/Product/${id}`, { name: 'Shape 2' }).expect(200);
      const answers = [];
      for (const path of streamPaths('Product', id)) answers.push((await t.get(path).expect(200).expect('Content-Type', /json/)).body);
      for (const answer of answers) expect(answer).toEqual(answers[0]);
      const { total, list } = answers[0] as { total: number; list: Item[] };
      expect(Object.keys(answers[0]).sort()).toEqual(['list', 'total']);
      expect(total).toBe(3);
      expect(list.map((c) => c.action)).toEqual(['Update', 'Update', 'Create']);
      expect(list[0].diff).toEqual({ name: { was: 'Shape', became: 'Shape 2' } });
      expect(list[1].diff).toEqual({ price: { was: 1, became: 2 } });
      const seqs = list.map((c) => Number(c.id));
      expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
      for (const item of list) {
        expect(Object.keys(item).sort()).toEqual(ITEM_KEYS);
        expect(item).toMatchObject({ id: expect.stringMatching(/^\d+$/), userId: adminId, userName: expect.any(String) });
        expect(item.createdAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      }
    });
  });

  it('pages with offset and maxSize; maxSize 200 is allowed, 201 and bad values are 400', async () => {
    const id = await productWith(5);
    for (const path of streamPaths('Product', id, 'offset=1&maxSize=2')) {
      const res = await t.get(path).expect(200);
      expect(res.body.total).toBe(6);
      expect(res.body.list.map((c: Item) => c.diff.price)).toEqual([{ was: 3, became: 4 }, { was: 2, became: 3 }]);
    }
    for (const path of streamPaths('Product', id, 'offset=5&maxSize=200')) expect((await t.get(path).expect(200)).body.list.map((c: Item) => c.action)).toEqual(['Create']);
    for (const path of streamPaths('Product', id, 'maxSize=0')) expect((await t.get(path).expect(200)).body).toEqual({ total: 6, list: [] });
    for (const query of ['maxSize=201', 'maxSize=-1', 'maxSize=abc', 'offset=-1', 'offset=1.5']) {
      for (const path of streamPaths('Product', id, query)) {
        const res = await t.get(path).expect(400);
        expect(res.body.error.code).toBe('CORE_INVALID_QUERY');
      }
    }
    // without paging parameters: the first page, newest first
    expect((await t.get(streamPaths('Product', id)[0]).expect(200)).body.list).toHaveLength(6);
  });

  it('answers 404 for an unknown entity type, an unknown id or a deleted record, and 400 without entityName or id', async () => {
    const id = await productWith(0);
    for (const path of [...streamPaths('Nope', id), ...streamPaths('Product', 'no-such-id')]) {
      const res = await t.get(path).expect(404);
      expect(res.body.error.code).toMatch(/^CORE_(NOT_FOUND|ROUTE_NOT_FOUND)$/);
    }
    for (const base of ['/api', '/api/v1']) {
      expect((await t.get(`${base}/entityStream?id=${id}`).expect(400)).body.error.code).toBe('CORE_INVALID_QUERY');
      expect((await t.get(`${base}/entityStream?entityName=&id=${id}`).expect(400)).body.error.code).toBe('CORE_INVALID_QUERY');
      expect((await t.get(`${base}/entityStream?entityName=Product`).expect(400)).body.error.code).toBe('CORE_INVALID_QUERY');
    }
    await t.del(`/api/Product/${id}`).expect(200);
    for (const path of streamPaths('Product', id)) await t.get(path).expect(404);
  });

  it('needs read access to the record and the role’s stream right: 403 otherwise, 404 for a record hidden by own', async () => {
    const noStream = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'all' } } });
    const noRead = await userWithRole(t, { scopes: { Product: { read: 'no', stream: true }, Brand: { read: 'all' } } });
    const own = await userWithRole(t, { scopes: { Product: { read: 'own', create: true, edit: 'own', stream: true } } });
    const unmentioned = await userWithRole(t, { scopes: { Brand: { read: 'all', stream: true } } });
    const reader = await userWithRole(t, { scopes: { Product: { read: 'all', stream: true } } });
    const theirs = await productWith(1);
    const mine = await productWith(1, own);
    for (const path of streamPaths('Product', theirs)) {
      for (const user of [noStream, noRead, unmentioned]) expect((await user.get(path).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      expect((await own.get(path).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      expect((await reader.get(path).expect(200)).body.total).toBe(2);
    }
    for (const path of streamPaths('Product', mine)) {
      const res = await own.get(path).expect(200);
      expect(res.body.list.map((c: Item) => [c.action, c.userId])).toEqual([['Update', own.user.id], ['Create', own.user.id]]);
      await noStream.get(path).expect(403);
    }
  });

  it('leaves out of each diff the fields the reader may not read', async () => {
    const blind = await userWithRole(t, { scopes: { Product: { read: 'all', stream: true } }, fields: { Product: { price: { read: false }, categories: { read: false } } } });
    const id = (await t.post('/api/Product', { name: 'Secret price', price: 10, categoriesIds: [cats[0]] }).expect(200)).body.id;
    await t.patch(`/api/Product/${id}`, { price: 11, name: 'Secret price 2' }).expect(200);
    await t.patch(`/api/Product/${id}`, { price: 12 }).expect(200);
    await t.post(`/api/Product/${id}/categories`, { id: cats[1] }).expect(200);
    for (const path of streamPaths('Product', id)) {
      const seen = (await blind.get(path).expect(200)).body as { total: number; list: Item[] };
      expect(seen.total).toBe(4);
      expect(seen.list.map((c) => [c.action, c.diff])).toEqual([
        ['Relate', {}],
        ['Update', {}],
        ['Update', { name: { was: 'Secret price', became: 'Secret price 2' } }],
        ['Create', expect.objectContaining({ name: { was: null, became: 'Secret price' } })],
      ]);
      for (const c of seen.list) expect(Object.keys(c.diff)).not.toEqual(expect.arrayContaining(['price']));
      expect(Object.keys(seen.list[3].diff)).not.toContain('categoriesIds');
      const full = (await t.get(path).expect(200)).body as { list: Item[] };
      expect(full.list[0].diff).toEqual({ categoriesIds: { was: [cats[0]], became: [cats[0], cats[1]] } });
      expect(full.list[1].diff).toEqual({ price: { was: 11, became: 12 } });
    }
  });

  it('shows multiple links as id sets, and stores nothing for writes that change nothing', async () => {
    const id = (await t.post('/api/Product', { name: 'Sets', categoriesIds: [cats[0], cats[1]] }).expect(200)).body.id;
    await t.patch(`/api/Product/${id}`, { categoriesIds: [cats[1], cats[2]] }).expect(200);
    // none of these changes the record
    await t.patch(`/api/Product/${id}`, { categoriesIds: [cats[1], cats[2]], name: 'Sets' }).expect(200);
    await t.put(`/api/v1/Product/${id}`, {}).expect(200);
    await t.post(`/api/Product/${id}/categories`, { ids: [cats[2], cats[1]] }).expect(200, 'true');
    await t.del(`/api/v1/Product/${id}/categories?id=${cats[0]}`).expect(200, 'true');
    await t.post('/api/entityMassUpdate', { entityName: 'Product', ids: [id], values: { name: 'Sets' }, addLinks: { categories: [cats[1]] } }).expect(200);
    await t.post('/api/upsert', [{ entity: 'Product', payload: { id, name: 'Sets' } }]).expect(200);
    const { total, list } = (await t.get(`/api/v1/Product/${id}/stream`).expect(200)).body as { total: number; list: Item[] };
    expect(total).toBe(2);
    expect(list[0]).toMatchObject({ action: 'Update', diff: { categoriesIds: { was: [cats[0], cats[1]], became: [cats[1], cats[2]] } } });
    expect(list[1].diff.categoriesIds).toEqual({ was: [], became: [cats[0], cats[1]] });
  });

  it('begins with the record’s create: a record made with the id of one removed for good does not show the changes of that one', async () => {
    const role = { scopes: { Product: { read: 'own', create: true, edit: 'own', delete: 'own', stream: true } } };
    const [first, second] = [await userWithRole(t, role), await userWithRole(t, role)];
    for (const [i, base] of ['/api', '/api/v1'].entries()) {
      const id = `reused-${i}-${Date.now()}`;
      await first.post(`${base}/Product`, { id, name: 'First', mpn: 'secret of the first' }).expect(200);
      await first.patch(`${base}/Product/${id}`, { mpn: 'another secret' }).expect(200);
      await first.del(`${base}/Product/${id}`).set('permanently', 'true').expect(200);
      await second.post(`${base}/Product`, { id, name: 'Second' }).expect(200);
      await second.patch(`${base}/Product/${id}`, { name: 'Second 2' }).expect(200);
      for (const path of streamPaths('Product', id)) {
        for (const reader of [second, t]) {
          const { total, list } = (await reader.get(path).expect(200)).body as { total: number; list: Item[] };
          expect(total).toBe(2);
          expect(list.map((c) => [c.action, c.userId])).toEqual([['Update', second.user.id], ['Create', second.user.id]]);
          expect(JSON.stringify(list)).not.toContain('secret');
        }
        expect((await second.get(`${path}${path.includes('?') ? '&' : '?'}offset=1&maxSize=5`).expect(200)).body.list.map((c: Item) => c.action)).toEqual(['Create']);
      }
    }
  });

  it('names the acting admin as actor {id, name} in a delegated session only', async () => {
    const u = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'all', stream: true } } });
    const delegated = clientFor(t, await delegatedToken(t, ADMIN.userName, ADMIN.password, u.user.userName), u.user);
    const id = (await u.post('/api/Product', { name: 'Plain' }).expect(200)).body.id;
    await delegated.patch(`/api/Product/${id}`, { name: 'Delegated' }).expect(200);
    for (const path of streamPaths('Product', id)) {
      const [update, create] = (await u.get(path).expect(200)).body.list as Item[];
      expect(update).toMatchObject({ userId: u.user.id, userName: (u.user as { name?: string }).name, actor: { id: adminId, name: expect.any(String) } });
      expect(Object.keys(update).sort()).toEqual([...ITEM_KEYS, 'actor'].sort());
      expect(create.actor).toBeUndefined();
      expect(create.userId).toBe(u.user.id);
      expect(Object.keys(create).sort()).toEqual(ITEM_KEYS);
    }
  });
});
