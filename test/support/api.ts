import { createEntityApi, type EntityApi, type EntityApiOptions } from '@entity-records/core';
import express from 'express';
import http from 'node:http';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from './databases';
import { FEED_COMMENT } from '../../packages/core/src/sql/change-store';

export const ADMIN = { userName: 'admin', password: 'admin-test-password' };

/** supertest requests to one app, each prepared the same way (a token set, say). */
export interface Requests {
  get(path: string): request.Test;
  post(path: string, body?: unknown): request.Test;
  patch(path: string, body?: unknown): request.Test;
  put(path: string, body?: unknown): request.Test;
  del(path: string): request.Test;
}

/**
 * What supertest sends to. Give it a listening server where many requests go: for an app
 * (a function), supertest starts and stops a server of its own for every request, and binding
 * all those ports took a quarter of a busy test file's time.
 */
export type Target = Parameters<typeof request>[0];

/** Listens on a free port of 127.0.0.1. */
async function listening(app: http.RequestListener): Promise<http.Server> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Requests to `app`, each passed through `prepare` before it is sent. */
export function requestsTo(app: Target, prepare: (test: request.Test) => request.Test): Requests {
  return {
    get: (path) => prepare(request(app).get(path)),
    post: (path, body) => prepare(request(app).post(path)).send(body as object),
    patch: (path, body) => prepare(request(app).patch(path)).send(body as object),
    put: (path, body) => prepare(request(app).put(path)).send(body as object),
    del: (path) => prepare(request(app).delete(path)),
  };
}

/** An instance started for tests; its requests carry the admin token and take a path under `/api/` or `/api/v1/`. */
export interface TestApi extends Requests {
  api: EntityApi;
  app: express.Express;
  /** `app` listening on 127.0.0.1 until `close()`: what the requests go to. */
  server: http.Server;
  db: TestDatabase;
  /** A token of the admin user. */
  token: string;
  close(): Promise<void>;
}

/**
 * Starts an instance on a fresh database of the given kind (or on `shared`, which `close()` then
 * leaves to its owner), mounted in an Express app, with an admin token.
 */
export async function startTestApi(
  kind: 'sqlite' | 'postgres',
  options: Omit<EntityApiOptions, 'database'>,
  shared?: TestDatabase,
): Promise<TestApi> {
  const db = shared ?? (await createTestDatabase(kind));
  const api = createEntityApi({
    admin: ADMIN,
    logger: { info() {}, warn() {}, error() {} },
    ...options,
    auth: { passwordCost: 14, ...options.auth },
    database: db.url,
  });
  await api.ready();
  const app = express();
  app.use(api.router);
  const server = await listening(app);
  const login = await request(server)
    .get('/api/userSession')
    .auth(ADMIN.userName, ADMIN.password)
    .set('Authorization-Token-Only', 'true');
  if (login.status !== 200) throw new Error(`admin login failed: ${login.status} ${JSON.stringify(login.body)}`);
  const token: string = login.body.authorizationToken;
  const withToken = (test: request.Test) => test.set('Authorization-Token', token).set('Accept', 'application/json');
  return {
    api,
    app,
    server,
    db,
    token,
    ...requestsTo(server, withToken),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await api.close();
      if (!shared) await db.drop();
    },
  };
}

/**
 * The SQL the database runs while `send` runs, in order (warm the caches before), leaving out the
 * change feed's reads: they follow a commit on the feed's own time, beside the requests, and under
 * load fall inside one request's count or the next one's.
 */
export async function recordQueries(t: TestApi, send: () => PromiseLike<unknown>): Promise<string[]> {
  const sql: string[] = [];
  const listener = (query: { sql: string }) => void (query.sql.includes(FEED_COMMENT) || sql.push(query.sql));
  t.api.database.knex.on('query', listener);
  try {
    await send();
  } finally {
    t.api.database.knex.off('query', listener);
  }
  return sql;
}

/** How many queries the database runs while `send` runs (warm the caches before). */
export async function countQueries(t: TestApi, send: () => PromiseLike<unknown>): Promise<number> {
  return (await recordQueries(t, send)).length;
}

/** Both path generations, for `describe.each`. */
export const GENERATIONS = [
  ['A', '/api'],
  ['B', '/api/v1'],
] as const;
