import path from 'node:path';
import knex from 'knex';
import { childServerScope, ROOT, signIn, type ChildServer } from '../support/child-server';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../support/databases';
import { killPim } from '../support/pim-child';

/**
 * `Idempotency-Key` with two server processes on one database (CONTRACT §16; DESIGN.md, scaling
 * past one machine): what one process answered, the other replays; two requests with one key sent
 * to both at once make one write; a key held by a process that died is taken over after its lease.
 */
jest.setTimeout(180_000);

const servers = childServerScope(path.join(ROOT, 'test/support/job-server.js'), 'er-idem-');
const PASSWORD = 'idempotency-two-processes';
const LEASE_SECONDS = 1;

type Answer = { status: number; replayed: string | null; body: any };

describe.each(TEST_DBS)('idempotency keys across two processes on %s', (kind) => {
  let db: TestDatabase;
  let token: string;
  let keys = 0;
  const newKey = () => `two-${kind}-${(keys += 1)}-${Date.now()}`;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase(kind) : { kind, url: `sqlite:${path.join(servers.dir, 'idem.sqlite')}`, drop: async () => undefined };
  });
  afterAll(() => db?.drop());

  const start = async (): Promise<ChildServer> => {
    const server = await servers.start({
      env: (port) => ({ PORT: String(port), DATABASE_URL: db.url, ADMIN_PASSWORD: PASSWORD, IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS) }),
      listening: () => /^ready$/m,
    });
    token ??= ((await (await signIn(server.url, 'admin', PASSWORD)).json()) as { authorizationToken: string }).authorizationToken;
    return server;
  };
  const call = async (server: ChildServer, { method = 'POST', path: pathname, body, key }: { method?: string; path: string; body?: unknown; key?: string }): Promise<Answer> => {
    const res = await fetch(`${server.url}${pathname}`, {
      method,
      headers: { 'Authorization-Token': token, 'Content-Type': 'application/json', ...(key && { 'Idempotency-Key': key }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() };
  };
  const stored = async (server: ChildServer, skuPrefix: string): Promise<number> =>
    (await call(server, { method: 'GET', path: `/api/Product?totalOnly=true&where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=${skuPrefix}` })).body.total;
  const upsertOf = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => ({ entity: 'Product', payload: { sku: `${prefix}-${i}`, name: `Item ${i} of a long upsert`, quantity: i } }));

  it('replays in one process what the other answered, refuses another request with the key there, and writes once for two at once', async () => {
    const [a, b] = [await start(), await start()];
    const key = newKey();
    const body = { name: 'Made once', sku: `${key}-one` };
    const first = await call(a, { path: '/api/Product', body, key });
    expect(first).toMatchObject({ status: 200, replayed: null });
    const again = await call(b, { path: '/api/Product', body, key });
    expect(again).toEqual({ status: 200, replayed: 'true', body: first.body });
    expect((await call(b, { path: '/api/Product', body: { ...body, name: 'Other' }, key })).body.error.code).toBe('CORE_IDEMPOTENCY_MISMATCH');
    expect(await stored(b, `${key}-one`)).toBe(1);

    const together = newKey();
    const items = upsertOf(together, 3000);
    const answers = await Promise.all([a, b].map((server) => call(server, { path: '/api/upsert', body: items, key: together })));
    const fresh = answers.filter((x) => x.status === 200 && x.replayed === null);
    expect(fresh).toHaveLength(1);
    const other = answers.find((x) => x !== fresh[0]) as Answer;
    if (other.status === 409) expect(other.body.error.code).toBe('CORE_IDEMPOTENCY_IN_PROGRESS');
    else expect(other).toEqual({ status: 200, replayed: 'true', body: fresh[0].body });
    expect(await stored(a, `${together}-`)).toBe(3000);
    expect(await call(b, { path: '/api/upsert', body: items, key: together })).toEqual({ status: 200, replayed: 'true', body: fresh[0].body });
  });

  it('lets the other process take over a key whose process died holding it, once the lease has run out', async () => {
    const b = await start();
    const sqliteFile = db.url.replace(/^sqlite:/, '');
    const database = kind === 'postgres' ? knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } }) : knex({ client: 'better-sqlite3', connection: { filename: sqliteFile }, useNullAsDefault: true });
    const row = async (key: string) => database('idempotency_key').first('status').where({ idem_key: key });
    try {
      // The process must die while it holds the key: a run that finished first is tried again.
      for (let attempt = 1; ; attempt++) {
        const a = await start();
        const key = newKey();
        const items = upsertOf(key, 10_000);
        void call(a, { path: '/api/upsert', body: items, key }).catch(() => undefined);
        for (const deadline = Date.now() + 30_000; !(await row(key)) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 10));
        await killPim(a);
        await servers.stop(a);
        const left = await row(key);
        expect(left).toBeDefined();
        if (left.status !== null && attempt < 3) continue;
        // Died holding it: no answer kept. Until its lease runs out the key stays taken (409); then the next request runs.
        expect(left.status).toBeNull();
        let taken: Answer | undefined;
        for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
          taken = await call(b, { path: '/api/upsert', body: items, key });
          if (taken.status !== 409) break;
          expect(taken.body.error.code).toBe('CORE_IDEMPOTENCY_IN_PROGRESS');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(taken).toMatchObject({ status: 200, replayed: null });
        expect(taken?.body).toHaveLength(10_000);
        // Whatever the dead process stored is not stored twice (sku is unique): one record per item.
        expect(await stored(b, `${key}-`)).toBe(10_000);
        expect(await call(b, { path: '/api/upsert', body: items, key })).toMatchObject({ status: 200, replayed: 'true' });
        return;
      }
    } finally {
      await database.destroy();
    }
  });
});
