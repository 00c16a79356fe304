import { PassThrough } from 'node:stream';
import pino from 'pino';
import express from 'express';
import request from 'supertest';
import { createEntityApi, definePlugin, systemContext } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

interface Line {
  level: number;
  msg: string;
  requestId?: string;
  plugin?: string;
  err?: { type: string; message: string; stack: string };
  sql?: string;
  [key: string]: unknown;
}

/** A pino instance writing JSON lines into an array the test reads. */
function capturedPino() {
  const lines: Line[] = [];
  const stream = new PassThrough();
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString('utf8');
    const parts = text.split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as Line);
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

/** pino writes synchronously to a stream, but let the stream's data events run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A hook that fails with a plain Error: an unexpected fault, answered 500. */
const faulty = definePlugin({
  name: 'faulty',
  setup(api) {
    api.logger.info({ stage: 'setup' }, 'faulty plugin set up');
    api.onRecord('beforeCreate', 'Category', () => {
      throw new Error('boom in a hook');
    });
  },
});

describe.each(TEST_DBS)('logging through a pino instance on %s', (kind) => {
  let t: TestApi;
  const { logger, lines } = capturedPino();
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, plugins: [faulty], logger });
  });
  afterAll(() => t.close());

  it('logs start-up and schema steps at info, SQL text at debug, and a plugin through its child logger', async () => {
    await settle();
    const info = lines.filter((l) => l.level === 30);
    expect(info.map((l) => l.msg)).toContainEqual(expect.stringMatching(/^schema: /));
    expect(info.map((l) => l.msg)).toContainEqual(expect.stringMatching(/^ready: \d+ entity types on (sqlite|postgres)$/));
    expect(info.find((l) => l.msg === 'faulty plugin set up')).toMatchObject({ plugin: 'faulty', stage: 'setup' });
    const sql = lines.filter((l) => l.level === 20 && l.msg === 'sql');
    expect(sql.length).toBeGreaterThan(0);
    // Statement text only: the admin's password hash is a bound value, never logged.
    expect(JSON.stringify(sql)).not.toMatch(/scrypt|\$s0\$/);
  });

  it('logs a job queued, started and ended at info with its counts and time, and a failed one at error with the stack', async () => {
    t.api.jobs.define('logged-failure', () => {
      throw new Error('boom in a job');
    });
    lines.length = 0;
    const { jobId } = (await t.post('/api/upsertAsync', [{ entity: 'Brand', payload: { name: 'Logged job' } }]).expect(200)).body as { jobId: string };
    await finishedJob(t, { base: '/api', id: jobId });
    const failing = await t.api.jobs.start('logged-failure', {}, systemContext());
    expect(await finishedJob(t, { base: '/api', id: failing })).toMatchObject({ status: 'Failed' });
    await settle();
    const about = (id: string) => lines.filter((l) => l.jobId === id).map((l) => [l.level, l.msg]);
    expect(about(jobId)).toEqual([[30, `job ${jobId} (upsert) queued`], [30, `job ${jobId} (upsert) started`], [30, `job ${jobId} (upsert) succeeded`]]);
    expect(lines.find((l) => l.jobId === jobId && /succeeded/.test(l.msg))).toMatchObject({ type: 'upsert', status: 'Success', created: 1, updated: 0, notModified: 0, failed: 0, ms: expect.any(Number) });
    expect(about(failing)).toEqual([[30, `job ${failing} (logged-failure) queued`], [30, `job ${failing} (logged-failure) started`], [50, `job ${failing} (logged-failure) failed`]]);
    expect(lines.find((l) => l.jobId === failing && l.level === 50)?.err?.stack).toMatch(/Error: boom in a job\n\s+at /);
  });

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('gives the stack of a 500 and the request id it answered with to the logger', async () => {
      lines.length = 0;
      const res = await t.post(`${base}/Category`, { name: 'n', code: 'c' }).set('X-Request-Id', 'trace-42.a').expect(500);
      expect(res.headers['x-request-id']).toBe('trace-42.a');
      expect(res.body.error).toEqual({ code: 'CORE_INTERNAL', message: 'Internal server error (request trace-42.a)', details: { requestId: 'trace-42.a' } });
      expect(JSON.stringify(res.body)).not.toMatch(/boom/);
      await settle();
      const line = lines.find((l) => l.level === 50);
      expect(line).toMatchObject({ requestId: 'trace-42.a', status: 500, code: 'CORE_INTERNAL', method: 'POST' });
      expect(line?.err?.message).toBe('boom in a hook');
      expect(line?.err?.stack).toMatch(/Error: boom in a hook\n\s+at /);
    });

    it('makes a request id when none (or an unsafe one) is sent, and logs client errors at info with it', async () => {
      lines.length = 0;
      const made = await t.get(`${base}/Product/no-such-id`).expect(404);
      expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const unsafe = await t.get(`${base}/Product/no-such-id`).set('X-Request-Id', 'a b\tc').expect(404);
      expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const long = await t.get(`${base}/Brand`).set('X-Request-Id', 'x'.repeat(129)).expect(200);
      expect(long.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      await settle();
      const clientErrors = lines.filter((l) => l.level === 30 && l.status === 404);
      expect(clientErrors.map((l) => l.requestId)).toEqual([made.headers['x-request-id'], unsafe.headers['x-request-id']]);
    });
  });
});

/** The password a generated-password warning shows. */
const shownPassword = (message: string | undefined) => /generated password (\S+) \(shown only this once/.exec(message ?? '')?.[1] as string;

/** Signs in through the instance's router with Basic credentials. */
const signIn = (api: { router: express.Router }, userName: string, password: string) =>
  request(express().use(api.router)).get('/api/userSession').auth(userName, password).set('Authorization-Token-Only', 'true');

describe.each(TEST_DBS)('a missing admin password on %s', (kind) => {
  it('is printed to the console by the default logger (no logger option), and nothing else is', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const info = jest.spyOn(console, 'info').mockImplementation(() => undefined);
    const db = await createTestDatabase(kind);
    const api = createEntityApi({ database: db.url, entities: testEntities, admin: { userName: 'chief', password: process.env.UNSET_ADMIN_PASSWORD_FOR_TEST }, auth: { passwordCost: 14 } });
    try {
      await api.ready();
      expect(warn).toHaveBeenCalledTimes(1);
      const [message, facts] = warn.mock.calls[0] as [string, unknown];
      expect(facts).toEqual({ userName: 'chief' });
      const password = shownPassword(message);
      expect(password).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      await signIn(api, 'chief', password).expect(200);
      expect([...log.mock.calls, ...info.mock.calls]).toEqual([]);
    } finally {
      warn.mockRestore();
      log.mockRestore();
      info.mockRestore();
      await api.close();
      await db.drop();
    }
  });

  it('is generated and logged once at warn, and signs the admin in', async () => {
    const warnings: { facts: Record<string, unknown>; message?: string }[] = [];
    const warn = (facts: Record<string, unknown> | string, message?: string) =>
      void warnings.push(typeof facts === 'string' ? { facts: {}, message: facts } : { facts, message });
    const logger = { info() {}, error() {}, warn };
    const db = await createTestDatabase(kind);
    const api = createEntityApi({ database: db.url, entities: testEntities, admin: { userName: 'boss', password: process.env.UNSET_ADMIN_PASSWORD_FOR_TEST }, logger, auth: { passwordCost: 14 } });
    try {
      await api.ready();
      expect(warnings).toHaveLength(1);
      expect(warnings[0].facts).toEqual({ userName: 'boss' });
      const password = shownPassword(warnings[0].message);
      expect(password).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      await signIn(api, 'boss', password).expect(200);
      // Ready again (another start of the same database): the user exists, nothing is logged.
      await api.close();
      const again = createEntityApi({ database: db.url, entities: testEntities, admin: { userName: 'boss' }, logger, auth: { passwordCost: 14 } });
      await again.ready();
      await again.close();
      if (kind === 'postgres') expect(warnings).toHaveLength(1);
    } finally {
      await api.close().catch(() => undefined);
      await db.drop();
    }
  });
});
