import path from 'node:path';
import { childServerScope, ROOT, signIn } from '../../../test/support/child-server';
import { createTestDatabase, TEST_DBS } from '../../../test/support/databases';

const SERVER = path.join(ROOT, 'examples/minimal/dist/server.js');
const PASSWORD = 'minimal-smoke-password';

// Each test starts real server processes; a busy machine needs more than the default 30 s.
jest.setTimeout(120_000);

const scope = childServerScope(SERVER, 'er-minimal-');

async function smoke(databaseUrl: string): Promise<void> {
  const server = await scope.start({
    env: (port) => ({ PORT: String(port), DATABASE_URL: databaseUrl, ADMIN_PASSWORD: PASSWORD }),
    listening: (port) => new RegExp(`^http://127\\.0\\.0\\.1:${port}/api/Note$`, 'm'),
    probePath: '/health',
  });
  expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ ok: true });
  expect((await signIn(server.url, 'admin', 'change-me-now')).status).toBe(401);
  const login = await signIn(server.url, 'admin', PASSWORD);
  expect(login.status).toBe(200);
  const { authorizationToken } = (await login.json()) as { authorizationToken: string };
  const headers = { 'Authorization-Token': authorizationToken, 'Content-Type': 'application/json' };

  const created = await fetch(`${server.url}/api/Note`, { method: 'POST', headers, body: JSON.stringify({ title: 'Hello', body: 'World' }) });
  expect(created.status).toBe(200);
  const note = (await created.json()) as { id: string; title: string };
  expect(note).toMatchObject({ title: 'Hello', body: 'World' });
  for (const base of ['/api', '/api/v1']) {
    const list = await fetch(`${server.url}${base}/Note`, { headers });
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ total: 1, list: [{ id: note.id, title: 'Hello' }] });
  }
  expect((await fetch(`${server.url}/api/Note`)).status).toBe(401);
  const doc = await fetch(`${server.url}/apidocs/openapi.json`);
  expect(doc.status).toBe(200);
  expect(Object.keys(((await doc.json()) as { paths: object }).paths)).toEqual(expect.arrayContaining(['/api/Note', '/api/v1/Note/{id}']));

  expect(await scope.stop(server)).toEqual({ code: 0, signal: null });
}

describe('examples/minimal server', () => {
  it('serves the API on a SQLite file', () => smoke(`sqlite:${path.join(scope.dir, 'minimal.sqlite')}`));

  it('serves the API on in-memory SQLite', () => smoke('sqlite::memory:'));

  if (TEST_DBS.includes('postgres')) {
    it('serves the API on PostgreSQL', async () => {
      const db = await createTestDatabase('postgres');
      try {
        await smoke(db.url);
      } finally {
        await db.drop();
      }
    });
  }
});
