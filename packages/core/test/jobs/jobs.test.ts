import request from 'supertest';
import { definePlugin } from '@entity-records/core';
import { GENERATIONS, requestsTo, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

describe.each(TEST_DBS)('jobs on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, jobs: { expireInSeconds: 30 } });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('runs upsertAsync in the background and keeps the per-item results', async () => {
      const items = Array.from({ length: 1200 }, (_, i) => ({ entity: 'Product', payload: { sku: `ASYNC-${gen}-${i % 1000}`, name: `n${i}` } }));
      items.push({ entity: 'Product', payload: { price: 'bad' } } as never);
      const { jobId } = (await t.post(`${base}/upsertAsync`, items).expect(200)).body;
      expect(typeof jobId).toBe('string');
      const job = await finishedJob(t, { base, id: jobId });
      expect(job).toMatchObject({ id: jobId, type: 'upsert', status: 'Success', progress: 100 });
      expect(job.startedAt).toMatch(/^\d{4}-/);
      expect(job.endedAt).toMatch(/^\d{4}-/);
      expect(job.result).toHaveLength(1201);
      const statuses = job.result.map((r: { status: string }) => r.status);
      expect(statuses.slice(0, 1000).every((s: string) => s === 'Created')).toBe(true);
      expect(statuses.slice(1000, 1200).every((s: string) => s === 'Updated')).toBe(true);
      expect(statuses[1200]).toBe('Failed');
      expect(job.payload).toBeUndefined();
      const count = (await t.get(`${base}/Product?totalOnly=true&where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=ASYNC-${gen}-`).expect(200)).body;
      expect(count.total).toBe(1000);
    });

    it('updates a few records at once and reports errors by id', async () => {
      const a = (await t.post(`${base}/Brand`, { name: `Mass A ${gen}` }).expect(200)).body.id;
      const b = (await t.post(`${base}/Brand`, { name: `Mass B ${gen}` }).expect(200)).body.id;
      for (const method of ['post', 'patch'] as const) {
        const res = await t[method](`${base}/entityMassUpdate`, { entityName: 'Brand', ids: [a, b, 'missing'], values: { code: method } }).expect(200);
        expect(res.body.updated).toBe(2);
        expect(res.body.errors).toEqual([expect.objectContaining({ id: 'missing', code: 'CORE_NOT_FOUND' })]);
        expect((await t.get(`${base}/Brand/${b}`)).body.code).toBe(method);
      }
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Brand', ids: [a], values: { nope: 1 } }).expect(400);
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Nope', ids: [a], values: {} }).expect(404);
    });

    it('runs a mass update by where, or of many ids, as a job', async () => {
      const tag = `MW-${gen}`;
      await t.post(`${base}/upsert`, Array.from({ length: 210 }, (_, i) => ({ entity: 'Product', payload: { sku: `${tag}-${i}`, name: 'x' } }))).expect(200);
      const byWhere = await t.post(`${base}/entityMassUpdate`, {
        entityName: 'Product',
        where: [{ type: 'startsWith', attribute: 'sku', value: tag }],
        values: { quantity: 7 },
      }).expect(200);
      const job = await finishedJob(t, { base, id: byWhere.body.jobId });
      expect(job).toMatchObject({ type: 'massUpdate', status: 'Success', result: { updated: 210, errors: [] } });
      const ids = (await t.get(`${base}/Product?select=id&maxSize=300&where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=${tag}`)).body.list.map(
        (p: { id: string }) => p.id,
      );
      const many = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids, values: { quantity: 8 } }).expect(200);
      expect((await finishedJob(t, { base, id: many.body.jobId })).result.updated).toBe(210);
    });
  });

  it('shows a job only to the user who started it, and refuses mass updates without edit rights', async () => {
    const role = (await t.post('/api/Role', { name: 'job reader', scopes: { Brand: { read: 'all', create: true } } }).expect(200)).body;
    await t.post('/api/User', { userName: 'jobber', password: 'pw-jobber', rolesIds: [role.id] }).expect(200);
    const token = (await request(t.server).get('/api/userSession').auth('jobber', 'pw-jobber').set('Authorization-Token-Only', 'true')).body.authorizationToken;
    const mine = (await request(t.server).post('/api/upsertAsync').set('Authorization-Token', token).send([{ entity: 'Brand', payload: { name: 'Job brand' } }]).expect(200)).body.jobId;
    const job = await finishedJob(requestsTo(t.server, (test) => test.set('Authorization-Token', token)), { base: '/api', id: mine });
    expect(job.result[0].status).toBe('Created');
    const adminJob = (await t.post('/api/upsertAsync', [{ entity: 'Brand', payload: { name: 'Admin job brand' } }]).expect(200)).body.jobId;
    await request(t.server).get(`/api/Job/${adminJob}`).set('Authorization-Token', token).expect(404);
    await request(t.server).post('/api/entityMassUpdate').set('Authorization-Token', token).send({ entityName: 'Brand', ids: [], values: {} }).expect(403);
    await request(t.server).post('/api/Job').set('Authorization-Token', token).send({ type: 'x' }).expect(403);
  });

  it.each(GENERATIONS)('shows a role that reads every job their progress, but a result only to the user who started the job (generation %s)', async (_g, base) => {
    const role = (await t.post('/api/Role', { name: `job watcher ${base}`, scopes: { Job: { read: 'all' } } }).expect(200)).body;
    const userName = `watcher${base.replace(/\W/g, '')}`;
    await t.post('/api/User', { userName, password: 'pw-watcher', rolesIds: [role.id] }).expect(200);
    const token = (await request(t.server).get('/api/userSession').auth(userName, 'pw-watcher').set('Authorization-Token-Only', 'true')).body.authorizationToken;
    const watcher = requestsTo(t.server, (test) => test.set('Authorization-Token', token));
    const jobId = (await t.post(`${base}/upsertAsync`, [{ entity: 'Product', payload: { name: `Watched ${base}`, price: 9 } }]).expect(200)).body.jobId;
    const done = await finishedJob(t, { base, id: jobId });
    expect(done.result[0]).toMatchObject({ status: 'Created', entity: { price: 9 } });
    const seen = (await watcher.get(`${base}/Job/${jobId}`).expect(200)).body;
    expect(seen).toMatchObject({ id: jobId, status: 'Success', progress: 100, result: null });
    expect((await watcher.get(`${base}/Job/${jobId}?select=result`).expect(200)).body.result).toBeNull();
    expect((await watcher.get(`${base}/Job/${jobId}/result`).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
    const listed = (await watcher.get(`${base}/Job?select=result&maxSize=200`).expect(200)).body.list as { id: string; result: unknown }[];
    expect(listed.find((j) => j.id === jobId)?.result).toBeNull();
    expect((await t.get(`${base}/Job/${jobId}/result`).expect(200)).body.total).toBe(1);
  });
});

describe.each(TEST_DBS)('canceling jobs on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, jobs: { worker: false } });
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('cancels a pending job (generation %s), and only a pending one', async (_gen, base) => {
    const { jobId } = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: 'never' } }]).expect(200)).body;
    expect((await t.get(`${base}/Job/${jobId}`).expect(200)).body.status).toBe('Pending');
    await t.patch(`${base}/Job/${jobId}`, { status: 'Running' }).expect(400);
    await t.patch(`${base}/Job/${jobId}`, { progress: 50 }).expect(400);
    expect((await t.get(`${base}/Job/${jobId}`).expect(200)).body.endedAt).toBeNull();
    const canceled = await t.patch(`${base}/Job/${jobId}`, { status: 'Canceled' }).expect(200);
    expect(canceled.body.status).toBe('Canceled');
    expect(canceled.body.endedAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    // Sent again, the status changes nothing: the time it ended stays.
    expect((await t.put(`${base}/Job/${jobId}`, { status: 'Canceled' }).expect(200)).body.endedAt).toBe(canceled.body.endedAt);
    await t.patch(`${base}/Job/${jobId}`, { status: 'Pending' }).expect(400);
    const again = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: 'never2' } }]).expect(200)).body.jobId;
    await t.api.database.knex('job').update({ status: 'Success' }).where({ id: again });
    await t.patch(`${base}/Job/${again}`, { status: 'Canceled' }).expect(409);
  });
});

describe.each(TEST_DBS)('a job just started on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('is still pending when its request answers, so that it can be canceled before it runs (generation %s)', async (g, base) => {
    const { jobId } = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `canceled in time ${g}` } }]).expect(200)).body;
    expect((await t.get(`${base}/Job/${jobId}`).expect(200)).body.status).toBe('Pending');
    expect((await t.patch(`${base}/Job/${jobId}`, { status: 'Canceled' }).expect(200)).body.status).toBe('Canceled');
    // A job sent after it runs (jobs run in order), and the canceled one never did.
    const next = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `runs ${g}` } }]).expect(200)).body.jobId;
    expect((await finishedJob(t, { base, id: next })).status).toBe('Success');
    const names = (await t.get(`${base}/Brand?select=name`).expect(200)).body.list.map((b: { name: string }) => b.name);
    expect(names).toContain(`runs ${g}`);
    expect(names).not.toContain(`canceled in time ${g}`);
  });
});

describe.each(TEST_DBS)('a cancel racing a worker on %s', (kind) => {
  let t: TestApi;
  // Plays the worker: takes the job after the cancel read it as Pending, before the cancel writes.
  const claimFirst = definePlugin({
    name: 'claims-first',
    setup(api) {
      api.onRecord('beforeUpdate', 'Job', async ({ id }) => {
        await t.api.database.knex('job').update({ status: 'Running' }).where({ id: id as string });
      });
    },
  });
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, jobs: { worker: false }, plugins: [claimFirst] });
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('loses with 409 and leaves the job running (generation %s)', async (_gen, base) => {
    const { jobId } = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: 'raced' } }]).expect(200)).body;
    const res = await t.patch(`${base}/Job/${jobId}`, { status: 'Canceled' }).expect(409);
    expect(res.body.error.code).toBe('CORE_CONFLICT');
    expect((await t.get(`${base}/Job/${jobId}`).expect(200)).body.status).toBe('Running');
  });
});
