import { createEntityApi, type EntityApi } from '@entity-records/core';
import express from 'express';
import knex from 'knex';
import request from 'supertest';
import { ADMIN } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

// Two processes of one PostgreSQL database, played by two instances with caches that would keep a
// token or role for an hour: what one of them changes must count in the other at once.
const describeOnPostgres = TEST_DBS.includes('postgres') ? describe : describe.skip;

describeOnPostgres('cache invalidation between instances on one PostgreSQL database', () => {
  let db: TestDatabase;
  const instances: { api: EntityApi; app: express.Express }[] = [];
  const start = async () => {
    const api = createEntityApi({
      database: db.url,
      entities: testEntities,
      admin: ADMIN,
      auth: { passwordCost: 14, tokenCacheSeconds: 3600 },
      logger: { info() {}, warn() {}, error() {} },
    });
    await api.ready();
    const instance = { api, app: express().use(api.router) };
    instances.push(instance);
    return instance;
  };
  const signIn = async (app: express.Express, userName: string, password: string) =>
    (await request(app).get('/api/userSession').auth(userName, password).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken as string;
  /** Asks until the status is the one expected (the news travels asynchronously), at most 2 s. */
  const eventually = async (test: () => request.Test, status: number) => {
    let last = 0;
    for (let i = 0; i < 40 && last !== status; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      last = (await test()).status;
    }
    expect(last).toBe(status);
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    for (const { api } of instances) await api.close();
    await db.drop();
  });

  it('revokes a token, a deactivated user and a changed role in the other instance at once', async () => {
    const a = await start();
    const b = await start();
    const adminToken = await signIn(a.app, ADMIN.userName, ADMIN.password);
    const asAdmin = (path: string, body: object) => request(a.app).post(path).set('Authorization-Token', adminToken).send(body);

    // a token signed out through A
    const token = await signIn(a.app, ADMIN.userName, ADMIN.password);
    await request(b.app).get('/api/Brand').set('Authorization-Token', token).expect(200);
    await request(a.app).delete('/api/userSession').set('Authorization-Token', token).expect(200);
    await eventually(() => request(b.app).get('/api/Brand').set('Authorization-Token', token), 401);

    // a role narrowed through A
    const role = (await asAdmin('/api/Role', { name: 'reader', scopes: { Brand: { read: 'all' } } }).expect(200)).body;
    const user = (await asAdmin('/api/User', { userName: 'reader', password: 'pw-reader-1', rolesIds: [role.id] }).expect(200)).body;
    const readerToken = await signIn(b.app, 'reader', 'pw-reader-1');
    await request(b.app).get('/api/Brand').set('Authorization-Token', readerToken).expect(200);
    await request(a.app).patch(`/api/Role/${role.id}`).set('Authorization-Token', adminToken).send({ scopes: { Brand: { read: 'no' } } }).expect(200);
    await eventually(() => request(b.app).get('/api/Brand').set('Authorization-Token', readerToken), 403);

    // a user deactivated through A
    await request(a.app).patch(`/api/User/${user.id}`).set('Authorization-Token', adminToken).send({ isActive: false }).expect(200);
    await eventually(() => request(b.app).get('/api/Role').set('Authorization-Token', readerToken), 401);
  });

  it('forgets everything it cached when its listening connection drops', async () => {
    const b = instances[1] ?? (await start());
    const token = await signIn(b.app, ADMIN.userName, ADMIN.password);
    await request(b.app).get('/api/Brand').set('Authorization-Token', token).expect(200);
    // The token disappears without any news (as if announced while nobody listened) …
    const admin = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
    try {
      await admin('auth_token').delete();
      await request(b.app).get('/api/Brand').set('Authorization-Token', token).expect(200);
      // … and every listener of the database loses its connection.
      await admin.raw(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN %'`);
    } finally {
      await admin.destroy();
    }
    await eventually(() => request(b.app).get('/api/Brand').set('Authorization-Token', token), 401);

    // It listens again (after a second), and news reaches it as before.
    const listeners = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
    try {
      let count = 0;
      for (let i = 0; i < 50 && count < instances.length; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        count = Number((await listeners.raw(`select count(*) as n from pg_stat_activity where datname = current_database() and query like 'LISTEN %'`)).rows[0].n);
      }
      expect(count).toBe(instances.length);
    } finally {
      await listeners.destroy();
    }
    const fresh = await signIn(b.app, ADMIN.userName, ADMIN.password);
    await request(b.app).get('/api/Brand').set('Authorization-Token', fresh).expect(200);
    await request(instances[0].app).delete('/api/userSession').set('Authorization-Token', fresh).expect(200);
    await eventually(() => request(b.app).get('/api/Brand').set('Authorization-Token', fresh), 401);
  });
});
