import { createEntityApi, type EntityApiOptions } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `jobs.startDelayMs`: how long a new job waits before this process's worker takes it up. */
describe.each(TEST_DBS)('the start delay of jobs on %s', (kind) => {
  let slow: TestApi;
  let quick: TestApi;
  beforeAll(async () => {
    slow = await startTestApi(kind, { entities: testEntities, jobs: { queue: 'in-process', startDelayMs: 3_000 } });
    quick = await startTestApi(kind, { entities: testEntities, jobs: { queue: 'in-process', startDelayMs: 0 } });
  });
  afterAll(async () => {
    await slow.close();
    await quick.close();
  });

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('keeps a job pending for the delay set, where it can still be canceled', async () => {
      const items = [{ entity: 'Brand', payload: { name: `Delayed ${gen}` } }];
      const { jobId } = (await slow.post(`${base}/upsertAsync`, items).expect(200)).body;
      // Well past the default of 250 ms.
      await sleep(1_000);
      expect((await slow.get(`${base}/Job/${jobId}`).expect(200)).body.status).toBe('Pending');
      await slow.patch(`${base}/Job/${jobId}`, { status: 'Canceled' }).expect(200);
      const second = (await slow.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `Delayed ${gen} 2` } }]).expect(200)).body.jobId;
      expect(await finishedJob(slow, { base, id: second }, { withinMs: 20_000 })).toMatchObject({ status: 'Success', created: 1 });
    });

    it('starts a job right after its request with a delay of 0', async () => {
      const { jobId } = (await quick.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `Quick ${gen}` } }]).expect(200)).body;
      expect(await finishedJob(quick, { base, id: jobId }, { withinMs: 20_000, everyMs: 10 })).toMatchObject({ status: 'Success', created: 1 });
    });
  });
});

// pg-boss hands a job to the worker of any process sharing the database: none may take it within the delay.
const describeOnPostgres = TEST_DBS.includes('postgres') ? describe : describe.skip;

describeOnPostgres('the start delay of jobs on pg-boss, with the workers of two processes', () => {
  let sender: TestApi;
  let other: TestApi;
  beforeAll(async () => {
    // 5 s: room for the requests below on a loaded machine, well past two polls of 1 s.
    sender = await startTestApi('postgres', { entities: testEntities, jobs: { startDelayMs: 5_000 } });
    // Another process on the database: its idle worker polls every second for jobs sent elsewhere.
    other = await startTestApi('postgres', { entities: testEntities, jobs: { startDelayMs: 5_000 } }, sender.db);
  });
  afterAll(async () => {
    await other.close();
    await sender.close();
  });

  it('keeps a job pending for the delay in every process, where it can still be canceled', async () => {
    const { jobId } = (await sender.post('/api/upsertAsync', [{ entity: 'Brand', payload: { name: 'Delayed on pg-boss' } }]).expect(200)).body;
    // Past two polls of the other process's worker.
    await sleep(2_200);
    expect((await sender.get(`/api/Job/${jobId}`).expect(200)).body.status).toBe('Pending');
    await sender.patch(`/api/Job/${jobId}`, { status: 'Canceled' }).expect(200);
    const second = (await sender.post('/api/v1/upsertAsync', [{ entity: 'Brand', payload: { name: 'Delayed on pg-boss 2' } }]).expect(200)).body.jobId;
    expect(await finishedJob(sender, { base: '/api/v1', id: second }, { withinMs: 20_000 })).toMatchObject({ status: 'Success', created: 1 });
    await sleep(1_500);
    expect((await sender.get(`/api/Job/${jobId}`).expect(200)).body.status).toBe('Canceled');
    expect((await sender.get('/api/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=Delayed on pg-boss&totalOnly=true').expect(200)).body.total).toBe(0);
  });
});

describe('jobs.startDelayMs', () => {
  it('is refused at start-up unless a whole number of milliseconds from 0 to 60,000', () => {
    for (const startDelayMs of [-1, 1.5, 60_001, '250']) {
      const options = { database: 'sqlite::memory:', entities: testEntities, jobs: { startDelayMs } } as unknown as EntityApiOptions;
      expect(() => createEntityApi(options)).toThrow(expect.objectContaining({ name: 'BootError', message: expect.stringContaining('jobs.startDelayMs') }));
    }
  });
});
