import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

jest.setTimeout(180_000);

/**
 * Deactivating a user revokes their tokens; the jobs they queued and that have not run yet must
 * not write for them either (they end Failed, storing nothing).
 */
describe.each(TEST_DBS)('a job whose user was deactivated before it ran, on %s', (kind) => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-deactivated-'));
    db = kind === 'sqlite' ? { kind, url: `sqlite:${path.join(dir, 'db.sqlite')}`, drop: async () => undefined } : await createTestDatabase(kind);
  });
  afterAll(async () => {
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Without a worker the jobs stay Pending; the next instance, with one, takes them up on start.
  const start = (worker: boolean) => startTestApi(kind, { entities: testEntities, jobs: { queue: 'in-process', worker } }, db);

  it.each(GENERATIONS)('fails, and stores nothing (generation %s)', async (gen, base) => {
    let t: TestApi = await start(false);
    const role = (await t.post(`${base}/Role`, { name: `importer ${gen}`, scopes: { Brand: { create: true, read: 'all', edit: 'all' } } }).expect(200)).body;
    const user = (await t.post(`${base}/User`, { userName: `importer-${gen}`, password: 'pw-importer-1', isActive: true, rolesIds: [role.id] }).expect(200)).body;
    const kept = (await t.post(`${base}/Brand`, { name: `kept ${gen}`, code: 'before' }).expect(200)).body;
    const token = (await request(t.server).get('/api/userSession').auth(`importer-${gen}`, 'pw-importer-1').set('Authorization-Token-Only', 'true').expect(200)).body
      .authorizationToken;
    const send = (url: string, body: unknown) => request(t.server).post(url).set('Authorization-Token', token).send(body as object).expect(200);
    const upsert = (await send(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `queued ${gen}` } }])).body.jobId;
    const mass = (await send(`${base}/entityMassUpdate`, { entityName: 'Brand', where: [{ type: 'equals', attribute: 'id', value: kept.id }], values: { code: 'after' } })).body
      .jobId;
    await t.patch(`${base}/User/${user.id}`, { isActive: false }).expect(200);
    await t.close();

    t = await start(true);
    try {
      for (const id of [upsert, mass]) {
        const job = await finishedJob(t, { base, id });
        expect(job).toMatchObject({ status: 'Failed', message: 'The user who started the job is deactivated', created: 0, updated: 0 });
      }
      expect((await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=queued ${gen}&totalOnly=true`).expect(200)).body.total).toBe(0);
      expect((await t.get(`${base}/Brand/${kept.id}`).expect(200)).body.code).toBe('before');
      // Active again: a job queued now runs.
      await t.patch(`${base}/User/${user.id}`, { isActive: true }).expect(200);
      const again = (await request(t.server).get('/api/userSession').auth(`importer-${gen}`, 'pw-importer-1').set('Authorization-Token-Only', 'true').expect(200)).body
        .authorizationToken;
      const next = (await request(t.server).post(`${base}/upsertAsync`).set('Authorization-Token', again).send([{ entity: 'Brand', payload: { name: `queued ${gen}` } }]).expect(200)).body.jobId;
      expect((await finishedJob(t, { base, id: next })).status).toBe('Success');
    } finally {
      await t.close();
    }
  });
});
