import path from 'node:path';
import { signIn } from '../support/child-server';
import { TEST_DBS, type TestDatabase } from '../support/databases';
import { PIM_PASSWORD, pimDatabase, pimScope, startPim, type PimChild } from '../support/pim-child';

/**
 * A token revoked, or a user deactivated, through one process of the example is refused by another
 * process of the same database within one second (CONTRACT §2 tokens; the token cache of each
 * process: PostgreSQL announces the change, SQLite's short cache bounds it).
 */
jest.setTimeout(180_000);

const scope = pimScope('er-tokens-');

/** A fresh token of a user, signed in through `server`. */
async function tokenAt(server: PimChild, userName: string, password: string): Promise<string> {
  const res = await signIn(server.url, userName, password);
  expect(res.status).toBe(200);
  return ((await res.json()) as { authorizationToken: string }).authorizationToken;
}

/** The status of a request that needs a token, sent to `server` with `token`. */
async function statusWith(server: PimChild, token: string): Promise<number> {
  const res = await fetch(`${server.url}/api/metadata`, { headers: { 'Authorization-Token': token } });
  await res.arrayBuffer();
  return res.status;
}

/** Milliseconds until `server` refuses `token` (401), asked every 20 ms; fails after 5 s. */
async function msUntilRefused(server: PimChild, token: string, since: number): Promise<number> {
  for (;;) {
    const status = await statusWith(server, token);
    if (status === 401) return Date.now() - since;
    expect(status).toBe(200);
    if (Date.now() - since > 5000) throw new Error('the token was still accepted after 5 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(TEST_DBS)('tokens across two processes of the example on %s', (kind) => {
  let db: TestDatabase;
  let a: PimChild;
  let b: PimChild;

  beforeAll(async () => {
    db = await pimDatabase(kind, scope.dir, `tokens-${kind}`);
  });
  afterAll(() => db?.drop());

  beforeEach(async () => {
    a = await startPim(scope, { db, storageDir: path.join(scope.dir, 'files-a') });
    b = await startPim(scope, { db, storageDir: path.join(scope.dir, 'files-b') });
  });

  it.each([
    ['A', '/api/userSession'],
    ['B', '/api/v1/App/user'],
  ])('refuses in the other process within a second a token revoked in one (generation %s)', async (_generation, signOut) => {
    const token = await tokenAt(a, 'admin', PIM_PASSWORD);
    // The other process has checked the token and keeps it in its cache.
    for (let i = 0; i < 3; i++) expect(await statusWith(b, token)).toBe(200);
    const revoked = await fetch(`${a.url}${signOut}`, { method: 'DELETE', headers: { 'Authorization-Token': token } });
    expect(revoked.status).toBe(200);
    const since = Date.now();
    expect(await statusWith(a, token)).toBe(401);
    expect(await msUntilRefused(b, token, since)).toBeLessThan(1000);
    // The admin's other tokens still work in both.
    expect(await statusWith(b, b.token)).toBe(200);
    expect(await statusWith(a, a.token)).toBe(200);
  });

  it('refuses in the other process within a second the tokens of a user deactivated in one', async () => {
    const userName = `deactivated-${kind}`;
    const password = 'Deactivated-pass-123';
    const created = await a.call('POST', '/api/User', { userName, password, isActive: true });
    expect(created.status).toBe(200);
    const token = await tokenAt(a, userName, password);
    for (let i = 0; i < 3; i++) expect(await statusWith(b, token)).toBe(200);
    expect((await a.call('PATCH', `/api/User/${created.body.id}`, { isActive: false })).status).toBe(200);
    const since = Date.now();
    expect(await msUntilRefused(b, token, since)).toBeLessThan(1000);
  });
});
