import path from 'node:path';
import knex, { type Knex } from 'knex';
import { childServerScope, signIn, type ChildServer } from '../support/child-server';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../support/databases';
import { openSse, type SseClient } from '../support/sse';

/**
 * Changes made through one process reach the subscribers and listening endpoints of another one
 * on the same PostgreSQL database (CONTRACT §16; DESIGN.md, scaling past one machine).
 */
jest.setTimeout(120_000);
const PASSWORD = 'two-servers-events-1';
const scope = childServerScope(path.join(__dirname, '..', 'support', 'job-server.js'), 'er-events-two-');
const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;

describePg('events with two server processes on one PostgreSQL database', () => {
  let db: TestDatabase;
  let sql: Knex;
  let servers: ChildServer[];
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    sql = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    await sql?.destroy();
    await db?.drop();
  });
  beforeEach(async () => {
    const start = () => scope.start({ env: (port) => ({ DATABASE_URL: db.url, PORT: String(port), ADMIN_PASSWORD: PASSWORD }), listening: () => /ready/ });
    // one after the other: the first creates the schema
    servers = [await start(), await start()];
    token = ((await (await signIn(servers[0].url, 'admin', PASSWORD)).json()) as { authorizationToken: string }).authorizationToken;
  });

  const call = async (server: ChildServer, method: string, pathname: string, body?: unknown) => {
    const res = await fetch(`${server.url}${pathname}`, {
      method,
      headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('delivers a change made through one process to a subscriber of the other within a second', async () => {
    let es: SseClient | undefined;
    try {
      es = await openSse(`${servers[1].url}/api/v1/events?entityName=Product`, { 'Authorization-Token': token });
      expect(es.status).toBe(200);
      const delays: number[] = [];
      for (let i = 0; i < 5; i++) {
        const created = await call(servers[0], 'POST', '/api/Product', { name: `Across ${i}`, quantity: i });
        expect(created.status).toBe(200);
        const answered = Date.now();
        const event = await (es as SseClient).next((e) => e.event === 'Create' && JSON.parse(e.data).recordId === created.body.id, 5000);
        delays.push(Date.now() - answered);
        expect(JSON.parse(event.data)).toMatchObject({ entityType: 'Product', action: 'Create', diff: { name: { was: null, became: `Across ${i}` } } });
      }
      expect(Math.max(...delays)).toBeLessThan(1000);
      // told by a notification, not found by the once-a-second look (which alone would wait ~500 ms on average)
      expect([...delays].sort((a, b) => a - b)[2]).toBeLessThan(300);
      // in seq order, each once
      const seqs = es.events.map((e) => Number(e.id));
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(5);
    } finally {
      es?.close();
    }
  });

  it('shows on the listening endpoint of one process a write made through the other', async () => {
    const id = (await call(servers[0], 'POST', '/api/Product', { name: 'Listened across' })).body.id as string;
    const started = await call(servers[1], 'POST', '/api/startEntityListening', { entityName: 'Product', entityId: id });
    expect(started.status).toBe(200);
    const endpoint = `${servers[1].url}/${started.body.endpoint as string}`;
    // The record's changes and last modification made long ago: a write now moves the timestamp.
    await sql('record_change').where({ record_id: id }).update({ created_at: '2020-01-02 03:04:05' });
    await sql('product').where({ id }).update({ modified_at: '2020-01-02 03:04:05' });
    const before = await fetch(endpoint);
    expect(before.status).toBe(200);
    expect(await before.json()).toEqual({ timestamp: Date.UTC(2020, 0, 2, 3, 4, 5) / 1000 });
    const now = Math.floor(Date.now() / 1000);
    expect((await call(servers[0], 'PATCH', `/api/Product/${id}`, { quantity: 9 })).status).toBe(200);
    const after = (await (await fetch(endpoint)).json()) as { timestamp: number };
    expect(after.timestamp).toBeGreaterThanOrEqual(now);
    // and the public endpoint of the first process tells the same
    expect(await (await fetch(`${servers[0].url}/${started.body.endpoint as string}`)).json()).toEqual(after);
  });
});
