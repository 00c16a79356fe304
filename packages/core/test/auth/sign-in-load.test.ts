import os from 'node:os';
import request from 'supertest';
import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

jest.setTimeout(120_000);

const CPUS = os.availableParallelism();

/**
 * CONTRACT §17: password hashing runs as many at a time as there are CPUs, a bounded queue waits,
 * and sign-ins past it get 503 with Retry-After. (The limit is per process: this file's instances
 * share it, as jest gives each test file its own modules.)
 */
describe.each(TEST_DBS)('sign-ins under load on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    // A full-cost hash (a fraction of a second) keeps the first sign-ins busy while the others arrive.
    t = await startTestApi(kind, { entities: testEntities, auth: { passwordCost: 16, passwordHashQueue: 1 } });
  });
  afterAll(() => t.close());

  const signIn = (base: string, userName: string, password: string) =>
    request(t.server).get(`${base}/userSession`).auth(userName, password).set('Authorization-Token-Only', 'true');

  it.each(GENERATIONS)('hashes CPUs at a time, queues one more, and refuses the rest with 503 CORE_BUSY and Retry-After (generation %s)', async (_g, base) => {
    const parallel = CPUS + 1 + 4;
    const answers = await Promise.all(Array.from({ length: parallel }, () => signIn(base, ADMIN.userName, ADMIN.password)));
    const refused = answers.filter((res) => res.status === 503);
    expect(answers.filter((res) => res.status === 200)).toHaveLength(CPUS + 1);
    expect(refused).toHaveLength(4);
    for (const res of refused) {
      expect(res.body.error).toEqual({ code: 'CORE_BUSY', message: 'Too many sign-ins at once; try again shortly', details: {} });
      expect(res.headers['retry-after']).toBe('1');
    }
    // A refusal is no failed sign-in: nothing is throttled, and the next sign-in works.
    await signIn(base, ADMIN.userName, ADMIN.password).expect(200);
  });

  it.each(GENERATIONS)('answers an unknown user name as a wrong password, after a hash of its own (generation %s)', async (_g, base) => {
    const unknown = await signIn(base, `nobody-${_g}-${kind}`, 'whatever-1');
    const wrong = await signIn(base, ADMIN.userName, 'whatever-1');
    const shape = (res: request.Response) => ({
      status: res.status,
      body: res.body,
      headers: Object.keys(res.headers).filter((h) => !['date', 'etag', 'content-length'].includes(h)).sort(),
      reason: res.headers['x-status-reason'],
    });
    expect(shape(unknown)).toEqual(shape(wrong));
    expect(unknown.status).toBe(401);
    // An unknown name takes a place in the hashing limit as a known one does: past the places,
    // unknown names are refused alike, so each one costs a hash.
    const unknowns = await Promise.all(Array.from({ length: CPUS + 1 + 4 }, (_, i) => signIn(base, `nobody-${i}-${_g}-${kind}`, 'whatever-2')));
    expect(unknowns.filter((res) => res.status === 503)).toHaveLength(4);
    expect(unknowns.filter((res) => res.status === 401)).toHaveLength(CPUS + 1);
  });
});

describe.each(TEST_DBS)('sign-ins of one user under load on %s', (kind) => {
  it('bounds the attempts that wait behind the throttle as the hash queue: past them 503 with Retry-After, never an endless wait', async () => {
    // The default queue (64); the throttle admits 10 attempts of one user name at a time.
    const t = await startTestApi(kind, { entities: testEntities });
    try {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => request(t.server).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true')),
      );
      const statuses = answers.map((res) => res.status);
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
      const busy = answers.filter((res) => res.status === 503);
      // 10 admitted and 64 waiting at most: the others are refused at once.
      expect(busy.length).toBeGreaterThanOrEqual(100 - 10 - 64);
      for (const res of busy) expect([res.body.error.code, res.headers['retry-after']]).toEqual(['CORE_BUSY', '1']);
      await request(t.server).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).expect(200);
    } finally {
      await t.close();
    }
  });
});
