import knex, { type Knex } from 'knex';
import request from 'supertest';
import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../support/api';
import { createEntityApi, systemContext, type EntityApi } from '@entity-records/core';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../support/databases';
import { testEntities } from '../support/fixtures';

/**
 * PostgreSQL under faults (CONTRACT §17): statements past the timeout, a pool with no free
 * connection, connections the server ends mid-request. Each answers 503 with Retry-After and the
 * instance recovers by itself. A table lock held by a connection of the test makes requests wait.
 */
const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;

jest.setTimeout(60_000);

/** A connection of the test's own, holding an exclusive lock on a table (`schema.table` too) until `release()`. */
async function lockTable(db: TestDatabase, table: string): Promise<{ pid: number; release(): Promise<void> }> {
  const conn = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
  const trx = await conn.transaction();
  await trx.raw('lock table ?? in access exclusive mode', [table]);
  const pid = (await trx.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
  return {
    pid,
    async release() {
      await trx.rollback().catch(() => undefined);
      await conn.destroy();
    },
  };
}

/** Waits until a request of the instance waits for the lock (so that it is surely in flight). */
async function waitingForLock(admin: Knex, db: TestDatabase): Promise<void> {
  const name = new URL(db.url).pathname.slice(1);
  for (let i = 0; i < 200; i++) {
    const rows = (await admin.raw("select count(*)::int as n from pg_stat_activity where datname = ? and wait_event_type = 'Lock'", [name])).rows;
    if (rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no request waited for the lock');
}

const expect503 = (res: request.Response, code: string) => {
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 503, code });
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(JSON.stringify(res.body)).not.toMatch(/select|canceling|terminat|lock/i);
};

describePg('PostgreSQL faults', () => {
  let admin: Knex;
  beforeAll(() => {
    admin = knex({ client: 'pg', connection: process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', pool: { min: 0, max: 1 } });
  });
  afterAll(() => admin.destroy());

  describe('a statement past the statement timeout', () => {
    let t: TestApi;
    beforeAll(async () => {
      t = await startTestApi('postgres', { entities: testEntities, statementTimeoutMs: 400 });
    });
    afterAll(() => t.close());

    it.each(GENERATIONS)('answers 503 CORE_TIMEOUT with Retry-After, stores nothing, and then answers again (generation %s)', async (_g, base) => {
      const table = t.api.schema.entity('Product')?.table as string;
      const lock = await lockTable(t.db, table);
      try {
        expect503(await t.get(`${base}/Product`), 'CORE_TIMEOUT');
        expect503(await t.post(`${base}/Product`, { name: `timed out ${base}` }), 'CORE_TIMEOUT');
        // The request times out, not its items: an upsert (set-based, and one-at-a-time for a link object) and a mass update are 503 too.
        const upsertPath = base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
        expect503(await t.post(upsertPath, [{ entity: 'Product', payload: { name: `timed out ${base}` } }]), 'CORE_TIMEOUT');
        expect503(await t.post(upsertPath, [{ entity: 'Product', payload: { name: `timed out ${base}`, brand: { name: `timed out ${base}` } } }]), 'CORE_TIMEOUT');
        expect503(await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: ['some-id'], values: { name: 'x' } }), 'CORE_TIMEOUT');
      } finally {
        await lock.release();
      }
      const list = await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=name&where[0][value]=timed out ${base}`).expect(200);
      expect(list.body.total).toBe(0);
      await t.post(`${base}/Product`, { name: `after the timeout ${base}` }).expect(200);
    });
  });

  it('syncs the schema without a statement timeout: a start waiting for the sync of another process does not fail', async () => {
    const db = await createTestDatabase('postgres');
    const holder = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
    try {
      // The schema lock another process holds while it syncs (the key of the PostgreSQL dialect).
      const trx = await holder.transaction();
      await trx.raw('select pg_advisory_xact_lock(482113907)');
      const api = createEntityApi({ database: db.url, entities: testEntities, statementTimeoutMs: 300, logger: { info() {}, warn() {}, error() {} } });
      try {
        const started = api.ready();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await trx.commit();
        await started;
        expect(await api.repository('Brand').find(systemContext(), { totalOnly: true })).toEqual({ total: 0 });
      } finally {
        await api.close();
      }
    } finally {
      await holder.destroy();
      await db.drop();
    }
  });

  describe('the statement timeout of every connection', () => {
    /** `statement_timeout` of `count` pooled connections of the instance, held at once so that they are distinct. */
    async function poolTimeouts(api: EntityApi, count: number): Promise<string[]> {
      const held = await Promise.all(Array.from({ length: count }, () => api.database.knex.transaction()));
      try {
        return await Promise.all(held.map(async (trx) => (await trx.raw('show statement_timeout')).rows[0].statement_timeout as string));
      } finally {
        await Promise.all(held.map((trx) => trx.rollback()));
      }
    }
    const serverDefault = async () => (await admin.raw('show statement_timeout')).rows[0].statement_timeout as string;

    it('is 30 s on every pooled connection by default, statementTimeoutMs otherwise, and none with 0', async () => {
      const db = await createTestDatabase('postgres');
      try {
        for (const [statementTimeoutMs, expected] of [[undefined, '30s'], [1500, '1500ms'], [0, await serverDefault()]] as const) {
          const t = await startTestApi('postgres', { entities: testEntities, ...(statementTimeoutMs !== undefined && { statementTimeoutMs }) }, db);
          try {
            expect({ statementTimeoutMs, timeouts: await poolTimeouts(t.api, 3) }).toEqual({ statementTimeoutMs, timeouts: [expected, expected, expected] });
          } finally {
            await t.close();
          }
        }
      } finally {
        await db.drop();
      }
    });

    it('bounds the statements of the job queue (pg-boss) too: a job queued while its table is locked is 503 CORE_TIMEOUT, not a request that hangs', async () => {
      const t = await startTestApi('postgres', { entities: testEntities, statementTimeoutMs: 400 });
      try {
        const lock = await lockTable(t.db, 'pgboss.job');
        let answer: request.Response | 'still waiting';
        try {
          const waited = new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 5000));
          answer = await Promise.race([t.post('/api/upsertAsync', [{ entity: 'Brand', payload: { name: 'queued' } }]).then((res) => res), waited]);
        } finally {
          await lock.release();
        }
        if (answer === 'still waiting') throw new Error('the request still waited for the queue after 5 s');
        expect503(answer, 'CORE_TIMEOUT');
        // No Job row stays behind that no worker would ever run.
        expect((await t.get('/api/Job').expect(200)).body.total).toBe(0);
      } finally {
        await t.close();
      }
    });
  });

  describe('a pool without a free connection', () => {
    let t: TestApi;
    beforeAll(async () => {
      t = await startTestApi('postgres', { entities: testEntities, poolSize: 1, poolTimeoutMs: 300, statementTimeoutMs: 10_000 });
    });
    afterAll(() => t.close());

    it('answers 503 with Retry-After while every connection is taken, and recovers when one is free', async () => {
      await t.get('/api/Brand').expect(200); // the token is checked and cached
      const lock = await lockTable(t.db, t.api.schema.entity('Product')?.table as string);
      let held: Promise<request.Response> | undefined;
      try {
        held = t.get('/api/Product').then((res) => res);
        await waitingForLock(admin, t.db);
        expect503(await t.get('/api/Brand'), 'CORE_DATABASE_UNAVAILABLE');
      } finally {
        await lock.release();
      }
      expect((await held)?.status).toBe(200);
      await t.get('/api/Brand').expect(200);
    });
  });

  describe('connections the database ends mid-request', () => {
    let t: TestApi;
    beforeAll(async () => {
      t = await startTestApi('postgres', { entities: testEntities, poolSize: 3 });
    });
    afterAll(() => t.close());

    it('answers 503 for the request whose connection died, then recovers without a restart', async () => {
      await t.post('/api/Brand', { name: 'before the kill' }).expect(200);
      const lock = await lockTable(t.db, t.api.schema.entity('Product')?.table as string);
      try {
        const inFlight = t.get('/api/Product').then((res) => res);
        await waitingForLock(admin, t.db);
        const name = new URL(t.db.url).pathname.slice(1);
        const killed = await admin.raw('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = ? and pid <> ?', [name, lock.pid]);
        expect(killed.rows[0].n).toBeGreaterThan(0);
        expect503(await inFlight, 'CORE_DATABASE_UNAVAILABLE');
      } finally {
        await lock.release();
      }
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        status = (await t.get('/api/Brand')).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
      await t.post('/api/Brand', { name: 'after the kill' }).expect(200);
      const names = (await t.get('/api/Brand?select=name').expect(200)).body.list.map((b: { name: string }) => b.name);
      expect(names).toEqual(expect.arrayContaining(['before the kill', 'after the kill']));
    });
  });

  describe('a database that refuses new connections', () => {
    let t: TestApi;
    beforeAll(async () => {
      t = await startTestApi('postgres', { entities: testEntities, poolSize: 2 });
    });
    afterAll(() => t.close());

    it('answers 503 with Retry-After on every route while connections are refused (ALLOW_CONNECTIONS false), and recovers by itself', async () => {
      await t.post('/api/Brand', { name: 'before the refusal' }).expect(200);
      const name = new URL(t.db.url).pathname.slice(1);
      await admin.raw('alter database ?? allow_connections false', [name]);
      try {
        await admin.raw('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = ?', [name]);
        // The first request may still meet a connection the database ended; the later ones open new ones, which it refuses.
        for (let i = 0; i < 3; i++) {
          for (const [, base] of GENERATIONS) {
            expect503(await t.get(`${base}/Brand`), 'CORE_DATABASE_UNAVAILABLE');
            expect503(await t.post(`${base}/Brand`, { name: `refused ${i} ${base}` }), 'CORE_DATABASE_UNAVAILABLE');
          }
        }
        expect503(await request(t.server).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true'), 'CORE_DATABASE_UNAVAILABLE');
      } finally {
        await admin.raw('alter database ?? allow_connections true', [name]);
      }
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        status = (await t.get('/api/Brand')).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
      const names = (await t.get('/api/Brand?select=name').expect(200)).body.list.map((b: { name: string }) => b.name);
      expect(names).toEqual(['before the refusal']);
    });
  });
});

