import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

/**
 * A number beyond the range of a double (`1e400` in the JSON text) is the same value in a job as in
 * the request that started it (CONTRACT §15: one outcome on every route). JSON has no Infinity, and a
 * job's input stored as JSON turned it into null: `upsertAsync` cleared a price that `upsert`
 * refuses to touch, and stored `isActive: null` that `upsert` refuses as a value of the wrong type.
 */
describe.each(TEST_DBS)('numbers JSON cannot hold in the input of a job on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  /** A POST of JSON text as written, numbers beyond a double's range included. */
  const postText = (path: string, text: string) => request(t.server).post(path).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send(text);
  const product = async () => (await t.post('/api/Product', { name: 'Stored', price: 5, quantity: 1 }).expect(200)).body.id as string;
  const state = async (id: string) => {
    const read = await t.get(`/api/Product/${id}`).expect(200);
    return { etag: read.headers.etag, price: read.body.price, isActive: read.body.isActive, name: read.body.name };
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('fails the items of upsertAsync as upsert fails them, and stores nothing of them', async () => {
      const values = ['"price": 1e400', '"price": -1e400', '"isActive": 1e400', '"name": -1e999', '"quantity": 1e400'];
      for (const value of values) {
        const [sync, async] = [await product(), await product()];
        const before = { sync: await state(sync), async: await state(async) };
        const items = (id: string) => `[{"entity": "Product", "payload": {"id": "${id}", ${value}}}, {"entity": "Product", "payload": {"name": "Next", ${value}}}]`;
        const direct = (await postText(`${base}/upsert`, items(sync)).expect(200)).body;
        const started = (await postText(`${base}/upsertAsync`, items(async)).expect(200)).body;
        const job = await finishedJob(t, { base, id: started.jobId });
        expect([value, job.status, job.result]).toEqual([value, 'Success', direct]);
        expect(direct.map((item: { status: string }) => item.status)).toEqual(['Failed', 'Failed']);
        expect({ sync: await state(sync), async: await state(async) }).toEqual(before);
      }
    });

    it('refuses such a number inside a jsonObject value on every write route, and stores nothing', async () => {
      const id = (await t.post('/api/Product', { name: 'Specs', specs: { weight: 2 } }).expect(200)).body.id as string;
      const before = await t.get(`/api/Product/${id}`).expect(200);
      const specs = '{"weight": 1e400, "list": [1, -1e400]}';
      const send = (method: 'post' | 'patch' | 'put', path: string, text: string) =>
        request(t.server)[method](path).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send(text);
      for (const res of [
        await send('post', `${base}/Product`, `{"name": "New", "specs": ${specs}}`),
        await send('patch', `${base}/Product/${id}`, `{"specs": ${specs}}`),
        await send('put', `${base}/Product/${id}`, `{"specs": ${specs}}`),
        await send('post', '/api/entityMassUpdate', `{"entityName": "Product", "ids": ["${id}"], "values": {"specs": ${specs}}}`),
      ]) {
        expect({ status: res.status, code: res.body.error?.code ?? res.body.errors?.[0]?.code, message: res.body.error?.message ?? res.body.errors?.[0]?.message }).toEqual({
          status: res.body.errors ? 200 : 400,
          code: 'CORE_VALIDATION_FAILED',
          message: expect.stringContaining('specs must hold finite numbers only'),
        });
      }
      const items = `[{"entity": "Product", "payload": {"id": "${id}", "specs": ${specs}}}]`;
      const direct = (await send('post', `${base}/upsert`, items).expect(200)).body;
      expect(direct).toEqual([{ status: 'Failed', stored: false, message: expect.stringContaining('specs must hold finite numbers only') }]);
      const job = await finishedJob(t, { base, id: (await send('post', `${base}/upsertAsync`, items).expect(200)).body.jobId });
      expect(job.result).toEqual(direct);
      const after = await t.get(`/api/Product/${id}`).expect(200);
      expect([after.body.specs, after.headers.etag]).toEqual([{ weight: 2 }, before.headers.etag]);
      expect((await t.get('/api/Product?totalOnly=true&where[0][type]=equals&where[0][attribute]=name&where[0][value]=New').expect(200)).body.total).toBe(0);
    });

    it('keeps the values of a job that hold no such number as they were sent', async () => {
      const id = await product();
      const started = (await postText(`${base}/upsertAsync`, `[{"entity": "Product", "payload": {"id": "${id}", "price": 1e-400, "specs": {"$nonFinite": [[["price"], "Infinity"]], "n": null}}}]`).expect(200)).body;
      const job = await finishedJob(t, { base, id: started.jobId });
      expect(job.result[0]).toMatchObject({ status: 'Updated' });
      const read = (await t.get(`/api/Product/${id}`).expect(200)).body;
      expect([read.price, read.specs]).toEqual([0, { $nonFinite: [[['price'], 'Infinity']], n: null }]);
    });
  });
});
