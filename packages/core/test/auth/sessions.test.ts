import { createEntityApi, type EntityApi } from '@entity-records/core';
import express from 'express';
import request from 'supertest';
import { ADMIN, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const COOKIE_PATHS = [
  ['A', '/api/userSession/cookie', '/api'],
  ['B', '/api/v1/App/user/cookie', '/api/v1'],
] as const;

describe.each(TEST_DBS)('browser and delegated sessions on %s', (kind) => {
  let t: TestApi;
  let editor: { id: string };
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    const role = (await t.post('/api/Role', { name: 'Brand editor', scopes: { Brand: { create: true, read: 'all', edit: 'own' } } }).expect(200)).body;
    editor = (await t.post('/api/User', { userName: 'editor', name: 'Eddie', password: 'editor-pw', rolesIds: [role.id] }).expect(200)).body;
  });
  afterAll(() => t.close());

  describe.each(COOKIE_PATHS)('cookie session, generation %s', (_gen, path, base) => {
    it('sets an HttpOnly SameSite=Lax cookie that authenticates, guards changes against CSRF, and clears on DELETE', async () => {
      const agent = request.agent(t.server);
      const res = await agent.post(path).send({ userName: 'editor', password: 'editor-pw' }).expect(200);
      const cookie = String(res.headers['set-cookie']);
      expect(cookie).toMatch(/er_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
      expect(cookie).not.toMatch(/Secure/);
      expect(res.body.authorizationToken).toBeUndefined();
      expect(res.body.user.userName).toBe('editor');
      await agent.get(`${base}/Brand`).expect(200);
      const csrf = await agent.post(`${base}/Brand`).send({ name: `No header ${base}` }).expect(403);
      expect(csrf.body.error.code).toBe('CORE_FORBIDDEN');
      await agent.post(`${base}/Brand`).set('X-Requested-With', 'XMLHttpRequest').send({ name: `With header ${base}` }).expect(200);
      // Signing out changes state too: without the header it is refused and the session stays.
      expect((await agent.delete(path).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      await agent.get(`${base}/Brand`).expect(200);
      const out = await agent.delete(path).set('X-Requested-With', 'XMLHttpRequest').expect(200);
      expect(String(out.headers['set-cookie'])).toMatch(/er_session=; .*Max-Age=0/);
      await request(t.server).get(`${base}/Brand`).set('Cookie', cookie.split(';')[0]).expect(401);
    });

    it('takes a JSON body only: a text/plain or form body, which another site can send, signs no one in (415)', async () => {
      // What a cross-site form with enctype text/plain sends: JSON text in a body that is not JSON.
      const forged = '{"userName":"editor","password":"editor-pw","x":"="}';
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        const res = await request(t.server).post(path).set('Content-Type', type).send(forged).expect(415);
        expect(res.body.error.code).toBe('CORE_UNSUPPORTED_MEDIA_TYPE');
        expect(res.headers['set-cookie']).toBeUndefined();
      }
      await request(t.server).post(path).set('Content-Type', 'application/json; charset=utf-8').send('{"userName":"editor","password":"editor-pw"}').expect(200);
    });

    it('refuses a wrong password with 401 and a bad body with 400', async () => {
      await request(t.server).post(path).send({ userName: 'editor', password: 'nope' }).expect(401);
      await request(t.server).post(path).send({ userName: 'editor' }).expect(400);
    });
  });

  it('lets an admin act for a user with that user’s rights, remembering both', async () => {
    const login = await request(t.server).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Delegate', 'editor').expect(200);
    expect(login.body.user.userName).toBe('editor');
    expect(login.body.actor.userName).toBe(ADMIN.userName);
    const token = login.body.authorizationToken;
    const brand = await request(t.server).post('/api/Brand').set('Authorization-Token', token).send({ name: 'Delegated' }).expect(200);
    expect(brand.body.createdById).toBe(editor.id);
    await request(t.server).get('/api/Product').set('Authorization-Token', token).expect(403);
    const row = await t.api.database.knex('brand').where('id', brand.body.id).first();
    expect(row.created_by_actor_id).toBe(login.body.actor.id);
    expect(row.created_by_id).toBe(editor.id);
    expect('createdByActorId' in brand.body).toBe(false);
    await t.patch(`/api/Brand/${brand.body.id}`, { code: 'x' }).expect(200);
    expect((await t.api.database.knex('brand').where('id', brand.body.id).first()).modified_by_actor_id).toBeNull();
  });

  it('refuses delegation to non-admins and to unknown users', async () => {
    await request(t.server).get('/api/userSession').auth('editor', 'editor-pw').set('Authorization-Delegate', 'admin').expect(403);
    await request(t.server).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Delegate', 'ghost').expect(404);
  });
});

describe.each(TEST_DBS)('login throttling on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, auth: { throttle: { windowSeconds: 6 } } });
    await t.post('/api/User', { userName: 'victim', password: 'right-pw' }).expect(200);
    await t.post('/api/User', { userName: 'other', password: 'right-pw' }).expect(200);
  });
  afterAll(() => t.close());
  const attempt = (userName: string, password: string) => request(t.server).get('/api/userSession').auth(userName, password);

  it('refuses a user name after 10 failures, even with the right password, until the window passes', async () => {
    for (let i = 0; i < 10; i++) await attempt('victim', 'wrong').expect(401);
    const blocked = await attempt('victim', 'right-pw').expect(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(blocked.body.error.code).toBe('CORE_TOO_MANY_REQUESTS');
    // Another user name, as sign-in compares names exactly: its failures are its own.
    await attempt('VICTIM', 'wrong').expect(401);
    await attempt('other', 'right-pw').expect(200);
    const wait = Number((await attempt('victim', 'right-pw').expect(429)).headers['retry-after']);
    expect(wait).toBeLessThanOrEqual(6);
    await new Promise((r) => setTimeout(r, wait * 1000 + 200));
    await attempt('victim', 'right-pw').expect(200);
  });

  it('does not refuse a user name for the failures of the same name in other case', async () => {
    for (let i = 0; i < 11; i++) await attempt('OTHER', 'wrong').expect(i < 10 ? 401 : 429);
    await attempt('other', 'right-pw').expect(200);
    await request(t.server).get('/api/v1/App/user').auth('other', 'right-pw').expect(200);
  });

  it('counts attempts sent at once together: of 20 parallel wrong passwords at most 10 are tried, the others are 429', async () => {
    await t.post('/api/User', { userName: 'flooded', password: 'right-pw' }).expect(200);
    // Spread over the sign-in routes of both generations: one count for the user name.
    const paths = ['/api/userSession', '/api/v1/userSession', '/api/v1/App/user'];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => request(t.server).get(paths[i % paths.length]).auth('flooded', `wrong-${i}`)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
    await attempt('flooded', 'right-pw').expect(429);
  });

  it('throttles an address after too many failures across user names', async () => {
    const a = await startTestApi(kind, { entities: testEntities, auth: { throttle: { maxFailuresPerAddress: 25 } } });
    try {
      await a.post('/api/User', { userName: 'other', password: 'right-pw' }).expect(200);
      for (let i = 0; i < 25; i++) await request(a.server).get('/api/userSession').auth(`nobody${i}`, 'wrong').expect(401);
      await request(a.server).get('/api/userSession').auth('other', 'right-pw').expect(429);
      await request(a.server).post('/api/userSession/cookie').send({ userName: 'other', password: 'right-pw' }).expect(429);
    } finally {
      await a.close();
    }
  });
});

const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;
describePg('login throttling across two instances on one PostgreSQL database', () => {
  let t: TestApi;
  let second: EntityApi;
  beforeAll(async () => {
    t = await startTestApi('postgres', { entities: testEntities });
    second = createEntityApi({ database: t.db.url, entities: testEntities, logger: { info() {}, warn() {}, error() {} } });
    await second.ready();
  });
  afterAll(async () => {
    await second.close();
    await t.close();
  });

  it('counts failures from both instances together', async () => {
    const apps = [t.app, express().use(second.router)];
    for (let i = 0; i < 10; i++) await request(apps[i % 2]).get('/api/userSession').auth(ADMIN.userName, 'wrong').expect(401);
    await request(apps[0]).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).expect(429);
    await request(apps[1]).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).expect(429);
  });
});
