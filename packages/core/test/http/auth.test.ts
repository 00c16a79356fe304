import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const SESSION_PATHS = ['/api/userSession', '/api/v1/App/user', '/api/v1/userSession'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(TEST_DBS)('authentication on %s', (kind) => {
  let t: TestApi;
  const http = () => request(t.server);
  const login = (path = '/api/userSession', headers: Record<string, string> = {}) =>
    http().get(path).auth(ADMIN.userName, ADMIN.password).set({ 'Authorization-Token-Only': 'true', ...headers });

  let readerRoleId: string;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    readerRoleId = (await t.post('/api/Role', { name: 'Brand reader', scopes: { Brand: { read: 'all' } } }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  it.each(SESSION_PATHS)('%s gives a token with Basic credentials', async (path) => {
    const res = await login(path).expect(200);
    expect(Object.keys(res.body)).toEqual(['authorizationToken']);
    expect(res.body.authorizationToken).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    await http().get('/api/v1/Brand').set('Authorization-Token', res.body.authorizationToken).expect(200);
  });

  it('answers the full session without Authorization-Token-Only', async () => {
    const res = await http().get('/api/v1/App/user').auth(ADMIN.userName, ADMIN.password).expect(200);
    expect(res.body.user).toMatchObject({ userName: 'admin', isAdmin: true, rolesIds: [] });
    expect(res.body.user.password).toBeUndefined();
    expect(res.body.acl.Product).toMatchObject({ create: true, read: 'all' });
  });

  it('refuses wrong credentials with 401 and no browser prompt', async () => {
    const res = await http().get('/api/userSession').auth(ADMIN.userName, 'wrong').expect(401);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.body.error.code).toBe('CORE_UNAUTHORIZED');
    await http().get('/api/userSession').auth('nobody', 'x').expect(401);
    await http().get('/api/userSession').set('Authorization', 'Basic !!!').expect(401);
  });

  it('requires a token on every other route and refuses Basic there', async () => {
    for (const base of ['/api', '/api/v1']) {
      await http().get(`${base}/Brand`).expect(401);
      await http().get(`${base}/metadata`).expect(401);
      await http().get(`${base}/Brand`).set('Authorization-Token', 'made-up').expect(401);
      const basic = await http().get(`${base}/Brand`).auth(ADMIN.userName, ADMIN.password).expect(401);
      expect(basic.headers['www-authenticate']).toBeUndefined();
    }
  });

  it('revokes the presented token with DELETE', async () => {
    const token = (await login().expect(200)).body.authorizationToken;
    const other = (await login().expect(200)).body.authorizationToken;
    await http().delete('/api/v1/App/user').set('Authorization-Token', token).expect(200);
    await http().get('/api/Brand').set('Authorization-Token', token).expect(401);
    await http().get('/api/Brand').set('Authorization-Token', other).expect(200);
  });

  it.each(SESSION_PATHS)('HEAD %s checks the credentials and makes no token', async (path) => {
    const count = async () => Number((await t.api.database.knex('auth_token').count({ n: '*' }))[0].n);
    const before = await count();
    const res = await http().head(path).auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    await http().head(path).auth(ADMIN.userName, 'wrong').expect(401);
    expect(await count()).toBe(before);
  });

  it('stores only the SHA-256 of a token', async () => {
    const token = (await login().expect(200)).body.authorizationToken;
    const rows = await t.api.database.knex('auth_token').select('token_hash');
    expect(rows.some((r: { token_hash: string }) => r.token_hash === token)).toBe(false);
    expect(rows.every((r: { token_hash: string }) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  it('honours Authorization-Token-Lifetime and -Idletime (hours)', async () => {
    const short = (await login('/api/userSession', { 'Authorization-Token-Lifetime': String(0.6 / 3600) }).expect(200)).body.authorizationToken;
    await http().get('/api/Brand').set('Authorization-Token', short).expect(200);
    await sleep(700);
    await http().get('/api/Brand').set('Authorization-Token', short).expect(401);
    await login('/api/userSession', { 'Authorization-Token-Idletime': 'soon' }).expect(400);
  });

  it('keeps a token in use alive however short its idle time, in every process of the database, and refuses it once idle', async () => {
    // An idle time of 3 s: room for a slow request on a loaded machine.
    const token = (await login('/api/userSession', { 'Authorization-Token-Idletime': String(3 / 3600) }).expect(200)).body.authorizationToken;
    // A second instance on the same database (an in-memory SQLite database is one process's own).
    const other = t.db.url.includes(':memory:') ? undefined : await startTestApi(t.db.kind, { entities: testEntities }, t.db);
    try {
      // Used every 300 ms for more than two idle times: never idle.
      for (const started = Date.now(); Date.now() - started < 7000; ) {
        await http().get('/api/Brand').set('Authorization-Token', token).expect(200);
        await sleep(300);
      }
      // Another process judges it by the use this one stored.
      if (other) await request(other.server).get('/api/Brand').set('Authorization-Token', token).expect(200);
      await sleep(3500);
      await http().get('/api/Brand').set('Authorization-Token', token).expect(401);
      if (other) await request(other.server).get('/api/Brand').set('Authorization-Token', token).expect(401);
    } finally {
      await other?.close();
    }
  });

  it.each(GENERATIONS)('keeps a token used in turn through two processes alive while each use follows the one before within its idle time (generation %s)', async (_g, base) => {
    // Two instances on one database (a SQLite file: an in-memory database is one process's own),
    // each trusting what it cached for an hour: one that last saw the token long ago must judge it
    // by its stored last use, not refuse it as idle. It refused it (401) though used 0.9 s before.
    const dir = kind === 'sqlite' ? await fs.mkdtemp(path.join(os.tmpdir(), 'er-idle-')) : undefined;
    const db: TestDatabase = dir
      ? { kind, url: `sqlite:${path.join(dir, 'db.sqlite')}`, drop: () => fs.rm(dir, { recursive: true, force: true }) }
      : await createTestDatabase(kind);
    const options = { entities: testEntities, auth: { tokenCacheSeconds: 3600 } };
    const a = await startTestApi(kind, options, db);
    const b = await startTestApi(kind, options, db);
    try {
      const signIn = request(a.server).get('/api/userSession').auth(ADMIN.userName, ADMIN.password);
      const idle15s = { 'Authorization-Token-Only': 'true', 'Authorization-Token-Idletime': String(1.5 / 3600) };
      const token = (await signIn.set(idle15s).expect(200)).body.authorizationToken;
      const use = (instance: TestApi) => request(instance.server).get(`${base}/Brand`).set('Authorization-Token', token);
      await use(a).expect(200);
      await sleep(900);
      await use(b).expect(200);
      await sleep(900);
      // 1.8 s after A's own use, 0.9 s after B's.
      await use(a).expect(200);
      await sleep(900);
      await use(b).expect(200);
      await sleep(1800);
      await use(a).expect(401);
      await use(b).expect(401);
    } finally {
      await b.close();
      await a.close();
      await db.drop();
    }
  });

  it('takes fractions of an hour in whole milliseconds, and refuses times past 100 years with 400 (never a 500)', async () => {
    // Every sign-in route of both generations.
    for (const path of ['/api/userSession', '/api/v1/userSession', '/api/v1/App/user']) {
      for (const header of ['Authorization-Token-Lifetime', 'Authorization-Token-Idletime']) {
        for (const value of ['1.1', '1.00000001', '0.0000001', '1e-300', '876000']) {
          const token = (await login(path, { [header]: value }).expect(200)).body.authorizationToken;
          if (Number(value) >= 1) await http().get('/api/Brand').set('Authorization-Token', token).expect(200);
        }
        for (const value of ['876001', '1e15', '1e308', '99999999999999999', '0x10', '0b11', '0o7', 'Infinity', '-1', '+2', '1,5', '']) {
          expect((await login(path, { [header]: value }).expect(400)).body.error.code).toBe('CORE_VALIDATION_FAILED');
        }
      }
    }
  });

  it('revokes a user’s tokens when the password changes, and never returns the password', async () => {
    const user = await t.post('/api/User', { userName: 'alice', name: 'Alice', password: 'alice-pass-1', rolesIds: [readerRoleId] }).expect(200);
    expect(user.body.password).toBeUndefined();
    const alice = (await http().get('/api/userSession').auth('alice', 'alice-pass-1').set('Authorization-Token-Only', 'true').expect(200)).body
      .authorizationToken;
    await http().get('/api/Brand').set('Authorization-Token', alice).expect(200);
    await t.patch(`/api/User/${user.body.id}`, { password: 'alice-pass-2' }).expect(200);
    await http().get('/api/Brand').set('Authorization-Token', alice).expect(401);
    await http().get('/api/userSession').auth('alice', 'alice-pass-1').expect(401);
    await http().get('/api/userSession').auth('alice', 'alice-pass-2').expect(200);
    const list = await t.get('/api/User').expect(200);
    expect(list.body.list.every((u: Record<string, unknown>) => !('password' in u))).toBe(true);
    await t.get('/api/User?select=password').expect(400);
    const stored = await t.api.database.knex('user').select('password').where('id', user.body.id).first();
    expect(stored.password).toMatch(/^scrypt\$/);
  });

  /**
   * Holds the next token a sign-in stores until `release` is called: the sign-in has checked its
   * password by then (`reached` tells when).
   */
  function holdNextToken() {
    const store = (t.api.auth as unknown as { store: { insertToken: (...args: unknown[]) => Promise<void> } }).store;
    const insertToken = store.insertToken.bind(store);
    let release!: () => void;
    let reach!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const spy = jest.spyOn(store, 'insertToken').mockImplementationOnce(async (...args) => {
      reach();
      await released;
      return insertToken(...args);
    });
    return { reached, release, restore: () => spy.mockRestore() };
  }

  it.each(GENERATIONS)('refuses a token that a sign-in with the old password got while the password changed (generation %s)', async (_g, base) => {
    const userName = `carol${base.length}`;
    const user = await t.post(`${base}/User`, { userName, password: 'carol-pass-1', rolesIds: [readerRoleId] }).expect(200);
    const hold = holdNextToken();
    try {
      const signedIn = http().get(base === '/api' ? '/api/userSession' : '/api/v1/App/user').auth(userName, 'carol-pass-1').set('Authorization-Token-Only', 'true').then((res) => res);
      await hold.reached;
      await t.patch(`${base}/User/${user.body.id}`, { password: 'carol-pass-2' }).expect(200);
      hold.release();
      const token = (await signedIn).body.authorizationToken;
      expect(token).toEqual(expect.any(String));
      const res = await http().get(`${base}/Brand`).set('Authorization-Token', token).expect(401);
      expect(res.body.error.code).toBe('CORE_UNAUTHORIZED');
    } finally {
      hold.restore();
    }
    const fresh = (await http().get('/api/userSession').auth(userName, 'carol-pass-2').set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken;
    await http().get(`${base}/Brand`).set('Authorization-Token', fresh).expect(200);
  });

  it('refuses a delegated token made from an admin password that has changed since', async () => {
    const admin = await t.post('/api/User', { userName: 'dora', password: 'dora-pass-1', isAdmin: true }).expect(200);
    await t.post('/api/User', { userName: 'erin', password: 'erin-pass-1', rolesIds: [readerRoleId] }).expect(200);
    const hold = holdNextToken();
    try {
      const headers = { 'Authorization-Token-Only': 'true', 'Authorization-Delegate': 'erin' };
      const signedIn = http().get('/api/userSession').auth('dora', 'dora-pass-1').set(headers).then((res) => res);
      await hold.reached;
      await t.patch(`/api/v1/User/${admin.body.id}`, { password: 'dora-pass-2' }).expect(200);
      hold.release();
      const token = (await signedIn).body.authorizationToken;
      expect(token).toEqual(expect.any(String));
      await http().get('/api/v1/Brand').set('Authorization-Token', token).expect(401);
    } finally {
      hold.restore();
    }
    const fresh = (await http().get('/api/userSession').auth('dora', 'dora-pass-2').set('Authorization-Delegate', 'erin').set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken;
    await http().get('/api/v1/Brand').set('Authorization-Token', fresh).expect(200);
  });

  it('refuses an inactive user', async () => {
    const user = await t.post('/api/User', { userName: 'bob', password: 'bob-pass-1', rolesIds: [readerRoleId] }).expect(200);
    const bob = (await http().get('/api/userSession').auth('bob', 'bob-pass-1').set('Authorization-Token-Only', 'true').expect(200)).body
      .authorizationToken;
    await t.patch(`/api/User/${user.body.id}`, { isActive: false }).expect(200);
    await http().get('/api/Brand').set('Authorization-Token', bob).expect(401);
    await http().get('/api/userSession').auth('bob', 'bob-pass-1').expect(401);
  });
});
