import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

/**
 * A job's input is stored while it waits and runs; once it has ended (run to its end, failed or
 * canceled) its row keeps none of it: an input may hold a password, which no row keeps in clear.
 */
describe.each(TEST_DBS)('the input of an ended job on %s', (kind) => {
  let t: TestApi;
  let slow: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, jobs: { queue: 'in-process', startDelayMs: 0 } });
    slow = await startTestApi(kind, { entities: testEntities, jobs: { queue: 'in-process', startDelayMs: 4_000 } });
  });
  afterAll(async () => {
    await t.close();
    await slow.close();
  });

  const storedPayload = async (api: TestApi, id: string) => JSON.stringify((await api.api.database.knex('job').where({ id }).first('payload')).payload);

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('is gone once the job ended, an upsert or a mass update', async () => {
      const password = `job-secret-${gen}-${kind}`;
      const items = [{ entity: 'User', payload: { userName: `job-user-${gen}-${kind}`, password, isActive: true } }];
      const { jobId } = (await t.post(`${base}/upsertAsync`, items).expect(200)).body;
      expect(await finishedJob(t, { base, id: jobId })).toMatchObject({ status: 'Success', created: 1 });
      expect(await storedPayload(t, jobId)).not.toContain(password);
      // The user was made with that password: it signs in.
      const basic = Buffer.from(`job-user-${gen}-${kind}:${password}`).toString('base64');
      await request(t.server).get('/api/userSession').set('Authorization', `Basic ${basic}`).expect(200);
      // A mass update run as a job (by `where`): its input goes too.
      const where = [{ type: 'equals', attribute: 'userName', value: `job-user-${gen}-${kind}` }];
      const mass = (await t.post(`${base}/entityMassUpdate`, { entityName: 'User', where, values: { password: `${password}-2` } }).expect(200)).body.jobId as string;
      expect((await finishedJob(t, { base, id: mass })).status).toBe('Success');
      expect(await storedPayload(t, mass)).not.toContain(password);
    });

    it('is gone once a pending job is canceled', async () => {
      const password = `pending-secret-${gen}-${kind}`;
      const { jobId } = (await slow.post(`${base}/upsertAsync`, [{ entity: 'User', payload: { userName: `pending-${gen}-${kind}`, password } }]).expect(200)).body;
      expect(await storedPayload(slow, jobId)).toContain(password);
      await slow.patch(`${base}/Job/${jobId}`, { status: 'Canceled' }).expect(200);
      expect((await slow.get(`${base}/Job/${jobId}`).expect(200)).body.status).toBe('Canceled');
      expect(await storedPayload(slow, jobId)).not.toContain(password);
    });
  });
});
