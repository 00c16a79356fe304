import net from 'node:net';
import { createEntityApi, type EntityApi } from '@entity-records/core';
import express from 'express';
import request from 'supertest';
import { ADMIN } from '../support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../support/databases';
import { testEntities } from '../support/fixtures';

/** A TCP proxy in front of PostgreSQL that can be cut and restored, to play a database outage. */
function createProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server?.address() as net.AddressInfo).port;
        resolve();
      });
    });
  return {
    listen,
    get port() {
      return port;
    },
    async cut() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
}

const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;

describePg('database outage on postgres', () => {
  let db: TestDatabase;
  let api: EntityApi;
  const proxy = createProxy({ host: '127.0.0.1', port: 5432 });

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    await proxy.listen();
    const url = db.url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`);
    api = createEntityApi({ database: url, entities: testEntities, admin: ADMIN, logger: { info() {}, warn() {}, error() {} } });
    await api.ready();
  });
  afterAll(async () => {
    await proxy.cut();
    await api.close();
    await db.drop();
  });

  it('answers 503 while the database is unreachable and recovers by itself', async () => {
    const app = express().use(api.router);
    const token = (await request(app).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true').expect(200))
      .body.authorizationToken;
    await request(app).post('/api/Brand').set('Authorization-Token', token).send({ name: 'Before' }).expect(200);
    await proxy.cut();
    const down = await request(app).get('/api/Brand').set('Authorization-Token', token);
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('CORE_DATABASE_UNAVAILABLE');
    // CONTRACT §17: every 503 says when to try again.
    expect(down.headers['retry-after']).toBe('5');
    expect(JSON.stringify(down.body)).not.toMatch(/ECONN|select|postgres/i);
    await proxy.listen();
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      const res = await request(app).get('/api/Brand').set('Authorization-Token', token);
      status = res.status;
      if (status === 503) expect(res.headers['retry-after']).toBe('5');
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
    const list = await request(app).get('/api/Brand').set('Authorization-Token', token).expect(200);
    expect(list.body.list.map((b: { name: string }) => b.name)).toEqual(['Before']);
  });
});
