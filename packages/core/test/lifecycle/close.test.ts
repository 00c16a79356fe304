import http from 'node:http';
import type { AddressInfo } from 'node:net';
import knex from 'knex';
import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

jest.setTimeout(60_000);

const ITEMS = 240;

/**
 * Connections the PostgreSQL server holds open to the instance's database (pool, listener, job
 * queue), counted from outside; waits up to 2 s for the count to reach `until`, then answers it.
 */
async function serverConnections(t: TestApi, until: (n: number) => boolean): Promise<number> {
  const admin = knex({ client: 'pg', connection: process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', pool: { min: 0, max: 1 } });
  const name = new URL(t.db.url).pathname.slice(1);
  try {
    let n = -1;
    for (let i = 0; i < 40 && !until(n); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      n = (await admin.raw('select count(*)::int as n from pg_stat_activity where datname = ?', [name])).rows[0].n as number;
    }
    return n;
  } finally {
    await admin.destroy();
  }
}

/** The pool is closed: the instance's database handle runs no more queries, and (PostgreSQL) the server holds no connection of it. */
async function expectPoolClosed(t: TestApi): Promise<void> {
  await expect(t.api.database.knex.raw('select 1')).rejects.toThrow();
  if (t.db.kind === 'postgres') expect(await serverConnections(t, (n) => n === 0)).toBe(0);
}

/** CONTRACT §17: `api.close()` lets the requests in flight finish, refuses new ones with 503, stops jobs at a safe point and closes the pool. */
describe.each(TEST_DBS)('api.close() on %s', (kind) => {
  it.each(GENERATIONS)('answers the requests in flight, refuses new ones with 503 CORE_SHUTTING_DOWN, then closes the pool (generation %s)', async (_g, base) => {
    const t = await startTestApi(kind, { entities: testEntities, closeGraceMs: 20_000 });
    let closed = false;
    try {
      // Enough items that the upsert is still answering well after its first rows are stored (a
      // request refused meanwhile waits for the event loop, which the upsert keeps busy on SQLite).
      const items = Array.from({ length: ITEMS }, (_, i) => ({ entity: 'Product', payload: { name: `closing ${i}`, brand: { name: `closing brand ${i % 5}` } } }));
      const inFlight = t.post(`${base}/upsert`, items).then((res) => res);
      if (kind === 'postgres') expect(await serverConnections(t, (n) => n > 0)).toBeGreaterThan(0);
      // The upsert has started (its first items are stored) when the instance begins to close.
      const model = t.api.schema.entity('Product');
      for (let i = 0; i < 400 && Number((await t.api.database.knex(model?.table as string).count({ n: '*' }))[0].n) === 0; i++) await new Promise((r) => setTimeout(r, 5));
      const closing = t.api.close().then(() => (closed = true));
      const refused = await request(t.server).get(`${base}/Brand`).set('Authorization-Token', t.token);
      expect(refused.status).toBe(503);
      expect(refused.body.error).toEqual({ code: 'CORE_SHUTTING_DOWN', message: 'The server is shutting down; try again shortly', details: {} });
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.headers.connection).toBe('close');
      expect(closed).toBe(false);
      const answered = await inFlight;
      expect(answered.status).toBe(200);
      expect(answered.body.filter((r: { status: string }) => r.status === 'Created')).toHaveLength(ITEMS);
      await closing;
      expect(closed).toBe(true);
      await expectPoolClosed(t);
    } finally {
      if (!closed) await t.api.close();
      await t.db.drop();
    }
  });

  it('waits for a stalled request no longer than closeGraceMs, then closes the pool', async () => {
    const t = await startTestApi(kind, { entities: testEntities, closeGraceMs: 500 });
    const server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      // A body announced but never sent: the request stays in flight.
      const stalled = http.request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', method: 'POST', path: '/api/Brand', headers: { 'Authorization-Token': t.token, 'Content-Type': 'application/json', 'Content-Length': '100' } });
      stalled.on('error', () => undefined);
      stalled.write('{"name":');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      await t.api.close();
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(450);
      expect(took).toBeLessThan(5000);
      await expectPoolClosed(t);
      stalled.destroy();
    } finally {
      server.closeAllConnections();
      server.close();
      await t.db.drop();
    }
  });
});
