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

describe('jobs.startDelayMs', () => {
  it('is refused at start-up unless a whole number of milliseconds from 0 to 60,000', () => {
    for (const startDelayMs of [-1, 1.5, 60_001, '250']) {
      const options = { database: 'sqlite::memory:', entities: testEntities, jobs: { startDelayMs } } as unknown as EntityApiOptions;
      expect(() => createEntityApi(options)).toThrow(expect.objectContaining({ name: 'BootError', message: expect.stringContaining('jobs.startDelayMs') }));
    }
  });
});
