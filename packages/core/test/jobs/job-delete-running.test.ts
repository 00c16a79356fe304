import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

jest.setTimeout(180_000);

/**
 * A running job goes on writing whatever becomes of its record: deleting it while it runs is 409
 * (it would hide work that goes on); once it has ended, or while it is pending, it is deleted.
 */
describe.each(TEST_DBS)('deleting a job, on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('is refused while it runs and allowed once it has ended (generation %s)', async (gen, base) => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ entity: 'Brand', payload: { name: `running ${gen} ${i}` } }));
    const { jobId } = (await t.post(`${base}/upsertAsync`, items).expect(200)).body;
    for (let status = 'Pending'; status === 'Pending'; ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = (await t.get(`${base}/Job/${jobId}`).expect(200)).body.status;
    }
    // 20,000 items run for far longer than a delete takes to arrive.
    const refused = await t.del(`${base}/Job/${jobId}`);
    const job = await finishedJob(t, { base, id: jobId });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CORE_CONFLICT');
    expect(job).toMatchObject({ status: 'Success', created: 20_000 });
    await t.del(`${base}/Job/${jobId}`).expect(200);
    await t.get(`${base}/Job/${jobId}`).expect(404);
  });
});
