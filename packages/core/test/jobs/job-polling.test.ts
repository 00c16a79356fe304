import { ApiError, BootError, systemContext } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { durableDatabase } from '../../../../test/support/instances';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

describe.each(TEST_DBS)('jobs a UI can poll on %s', (kind) => {
  let t: TestApi;
  const seen: unknown[] = [];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, jobs: { expireInSeconds: 30 } });
    // A host's own long task on the same queue, run with the context of whoever started it.
    t.api.jobs.define('report', async (run) => {
      seen.push({ payload: run.payload, user: run.ctx.user?.userName });
      if (run.payload.fail) throw new ApiError('CORE_CONFLICT', 'the report cannot be made now');
      return [{ status: 'Created' }, { status: 'Failed', message: 'one row was bad' }, { status: 'Created' }];
    });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('counts created, updated, not modified and failed items on the job', async () => {
      const items = [
        ...Array.from({ length: 30 }, (_, i) => ({ entity: 'Product', payload: { sku: `POLL-${gen}-${i}`, name: `p${i}` } })),
        { entity: 'Product', payload: { sku: `POLL-${gen}-0`, name: 'changed' } },
        { entity: 'Product', payload: { sku: `POLL-${gen}-1`, name: 'p1' } },
        { entity: 'Product', payload: { price: 'bad' } },
        { entity: 'Product', payload: { name: 'no sku', sku: 7 } },
      ];
      const { jobId } = (await t.post(`${base}/upsertAsync`, items).expect(200)).body;
      const job = await finishedJob(t, { base, id: jobId });
      expect(job).toMatchObject({ status: 'Success', created: 30, updated: 1, notModified: 1, failed: 2 });
    });

    it('leaves result out of job lists unless selected', async () => {
      const { jobId } = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `List ${gen}` } }]).expect(200)).body;
      await finishedJob(t, { base, id: jobId });
      const list = (await t.get(`${base}/Job?maxSize=200`).expect(200)).body;
      const listed = list.list.find((j: { id: string }) => j.id === jobId);
      expect(listed).toMatchObject({ id: jobId, type: 'upsert', status: 'Success', created: 1, updated: 0, notModified: 0, failed: 0 });
      expect(listed).not.toHaveProperty('result');
      expect(listed).not.toHaveProperty('payload');
      const selected = (await t.get(`${base}/Job?select=status,result&maxSize=200`).expect(200)).body;
      expect(selected.list.find((j: { id: string }) => j.id === jobId).result).toHaveLength(1);
      // A single read still shows everything.
      expect((await t.get(`${base}/Job/${jobId}`).expect(200)).body.result).toHaveLength(1);
    });

    it('pages a job\'s result and filters it to failed items, each with its place in the input', async () => {
      const items = Array.from({ length: 25 }, (_, i) => ({ entity: 'Product', payload: i % 5 === 0 ? { price: 'bad' } : { sku: `PAGE-${gen}-${i}`, name: `n${i}` } }));
      const { jobId } = (await t.post(`${base}/upsertAsync`, items).expect(200)).body;
      await finishedJob(t, { base, id: jobId });
      const failed = (await t.get(`${base}/Job/${jobId}/result?status=Failed&maxSize=2&offset=1`).expect(200)).body;
      expect(failed.total).toBe(5);
      expect(failed.list.map((i: { index: number }) => i.index)).toEqual([5, 10]);
      expect(failed.list[0]).toMatchObject({ status: 'Failed', stored: false });
      const page = (await t.get(`${base}/Job/${jobId}/result?maxSize=3`).expect(200)).body;
      expect(page).toMatchObject({ total: 25 });
      expect(page.list.map((i: { index: number; status: string }) => [i.index, i.status])).toEqual([[0, 'Failed'], [1, 'Created'], [2, 'Created']]);
      const twoKinds = (await t.get(`${base}/Job/${jobId}/result?status=Created,Failed&maxSize=1000`).expect(200)).body;
      expect(twoKinds.total).toBe(25);
      expect((await t.get(`${base}/Job/${jobId}/result?status=Broken`).expect(400)).body.error.code).toBe('CORE_INVALID_QUERY');
      expect((await t.get(`${base}/Job/${jobId}/result?maxSize=-1`).expect(400)).body.error.code).toBe('CORE_INVALID_QUERY');
      expect((await t.get(`${base}/Job/${jobId}/result?maxSize=1001`).expect(400)).body.error.code).toBe('CORE_INVALID_QUERY');
      expect((await t.get(`${base}/Job/no-such-job/result`).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
    });

    it('runs a job type the host defined, on the same queue, with counts and paging', async () => {
      const admin = (await t.get(`${base}/userSession`).expect(200)).body.user;
      const jobId = await t.api.jobs.start('report', { month: `2026-0${gen === 'A' ? 1 : 2}` }, { variables: {}, user: admin });
      const job = await finishedJob(t, { base, id: jobId });
      expect(job).toMatchObject({ type: 'report', status: 'Success', created: 2, failed: 1 });
      expect(seen).toContainEqual({ payload: { month: `2026-0${gen === 'A' ? 1 : 2}` }, user: 'admin' });
      const failed = (await t.get(`${base}/Job/${jobId}/result?status=Failed`).expect(200)).body;
      expect(failed).toEqual({ total: 1, list: [{ status: 'Failed', message: 'one row was bad', index: 1 }] });
      const broken = await finishedJob(t, { base, id: await t.api.jobs.start('report', { fail: true }, systemContext()) });
      expect(broken).toMatchObject({ status: 'Failed', message: 'the report cannot be made now' });
    });
  });

  it('refuses a job type defined twice, core\'s own types and bad names at once', () => {
    expect(() => t.api.jobs.define('report', async () => null)).toThrow(BootError);
    expect(() => t.api.jobs.define('upsert', async () => null)).toThrow(/job type 'upsert' is defined already/);
    expect(() => t.api.jobs.define('no spaces', async () => null)).toThrow(/must be a letter/);
  });
});

describe.each(TEST_DBS)('the counters of a job that has not counted yet on %s', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await durableDatabase(kind);
  });
  afterAll(() => db.drop());

  it('are 0, not null: of a new pending job, and of one an earlier version stored without them once the instance starts', async () => {
    const counters = { created: 0, updated: 0, notModified: 0, failed: 0 };
    const sender = await startTestApi(kind, { entities: testEntities, jobs: { worker: false } }, db);
    const jobs: Record<string, string> = {};
    try {
      for (const [gen, base] of GENERATIONS) {
        const { jobId } = (await sender.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `pending ${gen}` } }]).expect(200)).body;
        jobs[gen] = jobId;
        expect((await sender.get(`${base}/Job/${jobId}`).expect(200)).body).toMatchObject({ status: 'Pending', ...counters });
        const listed = (await sender.get(`${base}/Job?select=status,created,updated,notModified,failed&maxSize=200`).expect(200)).body.list;
        expect(listed.find((j: { id: string }) => j.id === jobId)).toMatchObject({ status: 'Pending', ...counters });
      }
      // As a process of an earlier version stored them: no counters.
      await sender.api.database.knex('job').update({ created: null, updated: null, not_modified: null, failed: null });
    } finally {
      await sender.close();
    }
    const again = await startTestApi(kind, { entities: testEntities, jobs: { worker: false } }, db);
    try {
      for (const [gen, base] of GENERATIONS) {
        const read = (await again.get(`${base}/Job/${jobs[gen]}`).expect(200)).body;
        expect(read).toMatchObject({ status: 'Pending', ...counters });
        const zero = (await again.get(`${base}/Job?where[0][type]=equals&where[0][attribute]=failed&where[0][value]=0&select=id&maxSize=200`).expect(200)).body;
        expect(zero.list.map((j: { id: string }) => j.id)).toContain(jobs[gen]);
        // The job as read goes back with the cancel.
        expect((await again.put(`${base}/Job/${jobs[gen]}`, { ...read, status: 'Canceled' }).expect(200)).body).toMatchObject({ status: 'Canceled', ...counters });
      }
    } finally {
      await again.close();
    }
  });
});
