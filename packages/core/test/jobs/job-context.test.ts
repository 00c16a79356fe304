import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { durableDatabase } from '../../../../test/support/instances';
import { finishedJob } from '../../../../test/support/jobs';
import { attributeEntities, createAttribute, LANGUAGES, startAttributeApi, unique } from '../attributes/support';

const attributeItems = (gen: string) => [
  { entity: 'Attribute', payload: { name: unique(`no code ${gen} `), entityType: 'Product', type: 'varchar' } },
  { entity: 'Attribute', payload: { name: unique(`with code ${gen} `), code: unique(`jobCode${gen}`), entityType: 'Product', type: 'varchar' } },
];
const statuses = (results: { status: string }[]) => results.map((r) => r.status);

describe.each(TEST_DBS)('jobs run with the generation of their request on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const expected = gen === 'A' ? ['Failed', 'Created'] : ['Created', 'Created'];

    it('upsertAsync answers what upsert answers (an Attribute needs a code through generation A)', async () => {
      const sync = await t.post(`${base}/upsert`, attributeItems(gen)).expect(200);
      expect(statuses(sync.body)).toEqual(expected);
      const { jobId } = (await t.post(`${base}/upsertAsync`, attributeItems(gen)).expect(200)).body;
      const job = await finishedJob(t, { base, id: jobId });
      expect(job.status).toBe('Success');
      expect(statuses(job.result)).toEqual(expected);
      if (gen === 'A') expect(job.result[0].message).toMatch(/code/);
      else expect(job.result[0].entity.code).toBeNull();
    });

    it('a mass update job checks the records as the generation of its request does', async () => {
      const id = await createAttribute(t, { code: unique('massCode'), type: 'varchar' });
      const res = await t.post(`${base}/entityMassUpdate`, {
        entityName: 'Attribute',
        where: [{ type: 'equals', attribute: 'id', value: id }],
        values: { code: null },
      }).expect(200);
      const job = await finishedJob(t, { base, id: res.body.jobId });
      if (gen === 'A') {
        expect(job.result).toEqual({ updated: 0, errors: [expect.objectContaining({ id, code: 'CORE_VALIDATION_FAILED' })] });
        await t.patch(`${base}/Attribute/${id}`, { code: null }).expect(400);
      } else {
        expect(job.result).toEqual({ updated: 1, errors: [] });
      }
    });

    it('jobs write attribute values under Flatten-Attributes: true as the same requests do synchronously', async () => {
      const code = unique('jobShade');
      await createAttribute(t, { code, type: 'varchar' });
      const FLAT = { 'Flatten-Attributes': 'true' };
      const product = async () => (await t.post(`${base}/Product`, { name: unique('Flat') }).expect(200)).body.id as string;
      const valueOf = async (id: string) => (await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body[code];
      const [synced, queued, massed, massQueued] = [await product(), await product(), await product(), await product()];
      const item = (id: string, value: string) => [{ entity: 'Product', payload: { id, [code]: value } }];

      expect(statuses((await t.post(`${base}/upsert`, item(synced, 'sync')).set(FLAT).expect(200)).body)).toEqual(['Updated']);
      const upserted = await finishedJob(t, { base, id: (await t.post(`${base}/upsertAsync`, item(queued, 'async')).set(FLAT).expect(200)).body.jobId });
      expect(statuses(upserted.result)).toEqual(['Updated']);
      expect([await valueOf(synced), await valueOf(queued)]).toEqual(['sync', 'async']);

      const direct = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [massed], values: { [code]: 'mass' } }).set(FLAT).expect(200);
      expect(direct.body).toEqual({ updated: 1, errors: [] });
      const where = [{ type: 'equals', attribute: 'id', value: massQueued }];
      const job = await finishedJob(t, { base, id: (await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where, values: { [code]: 'mass job' } }).set(FLAT).expect(200)).body.jobId });
      expect(job.result).toEqual({ updated: 1, errors: [] });
      expect([await valueOf(massed), await valueOf(massQueued)]).toEqual(['mass', 'mass job']);

      // Without the header an attribute is an unknown field, synchronously and in a job alike.
      expect((await t.post(`${base}/upsert`, item(synced, 'plain')).expect(200)).body[0].status).toBe('Failed');
      const plain = await finishedJob(t, { base, id: (await t.post(`${base}/upsertAsync`, item(queued, 'plain')).expect(200)).body.jobId });
      expect(plain.result[0]).toMatchObject({ status: 'Failed', message: (await t.post(`${base}/upsert`, item(synced, 'plain')).expect(200)).body[0].message });
    });
  });
});

describe.each(TEST_DBS)('a job stored without a generation on %s', (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await durableDatabase(kind);
  });
  afterAll(async () => {
    await db.drop();
  });

  it('runs as before, without one; a job stored with one keeps it after a restart', async () => {
    const sender = await startTestApi(kind, { entities: attributeEntities, languages: LANGUAGES, jobs: { worker: false } }, db);
    const started: string[] = [];
    try {
      for (let i = 0; i < 2; i++) started.push((await sender.post('/api/upsertAsync', attributeItems(`old${i}`).slice(0, 1)).expect(200)).body.jobId);
      // As a process of an earlier version stored it: no context.
      await sender.api.database.knex('job').update({ context: null }).where({ id: started[0] });
    } finally {
      await sender.close();
    }
    const worker = await startTestApi(kind, { entities: attributeEntities, languages: LANGUAGES }, db);
    try {
      const [old, current] = [await finishedJob(worker, { base: '/api', id: started[0] }), await finishedJob(worker, { base: '/api', id: started[1] })];
      expect(old.result[0]).toMatchObject({ status: 'Created', entity: { code: null } });
      expect(current.result[0].status).toBe('Failed');
    } finally {
      await worker.close();
    }
  });
});
