import request from 'supertest';
import { definePlugin } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

jest.setTimeout(120_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records the `afterRestore` events of Brand, as a plugin that mirrors records elsewhere would. */
const restored: string[] = [];
const restoreWatcher = definePlugin({
  name: 'restore-watcher',
  setup(api) {
    api.onRecord('afterRestore', 'Brand', ({ id }) => {
      restored.push(String(id));
    });
  },
});

/**
 * `afterRestore` runs once per record brought back by `entityRestore`, after its commit; core uses
 * it to queue a pending job again.
 */
describe.each(TEST_DBS)('restoring records, on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    // The in-process queue on both databases: pg-boss's workers poll as well, and could take the
    // job up before the test deletes it (the start delay holds only for this process's wake-up).
    t = await startTestApi(kind, { entities: testEntities, plugins: [restoreWatcher], jobs: { queue: 'in-process' } });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('runs the afterRestore hooks of each record restored, once, and none for an id not restored', async () => {
      const ids: string[] = [];
      for (const name of ['one', 'two']) ids.push((await t.post(`${base}/Brand`, { name: `Restored ${gen} ${name}` }).expect(200)).body.id);
      for (const id of ids) await t.del(`${base}/Brand/${id}`).expect(200);
      restored.length = 0;
      const res = await t.post(`${base}/entityRestore`, { entityName: 'Brand', ids: [ids[0], ids[1], ids[0], 'no-such-brand'] }).expect(200);
      expect(res.body).toMatchObject({ restored: 2 });
      expect(restored).toEqual(ids);
    });

    it('runs a pending job deleted before it started and then restored', async () => {
      const items = [{ entity: 'Brand', payload: { name: `Job restored ${gen}` } }];
      const { jobId } = (await t.post(`${base}/upsertAsync`, items).expect(200)).body;
      await t.del(`${base}/Job/${jobId}`).expect(200);
      // The worker takes the job up (250 ms after its request), finds it deleted and drops it.
      await sleep(2_000);
      expect((await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=Job restored ${gen}`).expect(200)).body.total).toBe(0);
      await t.post(`${base}/entityRestore`, { entityName: 'Job', ids: [jobId] }).expect(200);
      const job = await finishedJob(t, { base, id: jobId }, { withinMs: 20_000 });
      expect(job).toMatchObject({ status: 'Success', created: 1 });
      expect((await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=Job restored ${gen}`).expect(200)).body.total).toBe(1);
    });

    it('gives a restored role its rights back at once', async () => {
      const role = (await t.post(`${base}/Role`, { name: `Restored readers ${gen}`, scopes: { Brand: { read: 'all' } } }).expect(200)).body.id;
      await t.post(`${base}/User`, { userName: `restored-reader-${gen}`, password: 'reader-pass-1', rolesIds: [role] }).expect(200);
      const signIn = await request(t.server).get('/api/userSession').auth(`restored-reader-${gen}`, 'reader-pass-1').set('Authorization-Token-Only', 'true').expect(200);
      const token = signIn.body.authorizationToken as string;
      await request(t.server).get(`${base}/Brand`).set('Authorization-Token', token).expect(200);
      await t.del(`${base}/Role/${role}`).expect(200);
      await request(t.server).get(`${base}/Brand`).set('Authorization-Token', token).expect(403);
      await t.post(`${base}/entityRestore`, { entityName: 'Role', ids: [role] }).expect(200);
      await request(t.server).get(`${base}/Brand`).set('Authorization-Token', token).expect(200);
    });
  });
});
