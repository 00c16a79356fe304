import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('records on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    it('creates, reads, updates with PATCH and PUT, and deletes a record', async () => {
      const created = await t.post(`${base}/Brand`, { name: `Acme ${base}`, code: 'AC' }).expect(200);
      expect(created.body).toMatchObject({ name: `Acme ${base}`, code: 'AC', createdByName: 'Administrator' });
      expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      const id = created.body.id;

      const read = await t.get(`${base}/Brand/${id}`).expect(200);
      expect(read.body).toEqual(created.body);

      const patched = await t.patch(`${base}/Brand/${id}`, { code: 'AX' }).expect(200);
      expect(patched.body).toMatchObject({ name: `Acme ${base}`, code: 'AX' });
      const put = await t.put(`${base}/Brand/${id}`, { code: 'AY' }).expect(200);
      expect(put.body.code).toBe('AY');

      expect((await t.del(`${base}/Brand/${id}`).expect(200)).body).toBe(true);
      await t.get(`${base}/Brand/${id}`).expect(404);
    });

    it('answers 404 for an unknown entity type or record', async () => {
      const res = await t.get(`${base}/Nope`).expect(404);
      expect(res.body.error.code).toBe('CORE_NOT_FOUND');
      expect(res.headers['x-status-reason']).toContain('Nope');
      await t.get(`${base}/Brand/does-not-exist`).expect(404);
      await t.patch(`${base}/Brand/does-not-exist`, { code: 'x' }).expect(404);
    });

    it('answers 409 for a unique violation and frees the value on soft delete', async () => {
      const sku = `SKU-${base}`;
      const first = await t.post(`${base}/Product`, { name: 'One', sku }).expect(200);
      const dup = await t.post(`${base}/Product`, { name: 'Two', sku }).expect(409);
      expect(dup.body.error).toMatchObject({ code: 'CORE_UNIQUE_VIOLATION', details: { fields: ['sku'] } });
      await t.del(`${base}/Product/${first.body.id}`).expect(200);
      await t.post(`${base}/Product`, { name: 'Two', sku }).expect(200);
      const restore = await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [first.body.id] }).expect(200);
      expect(restore.body.restored).toBe(0);
      expect(restore.body.errors[0]).toMatchObject({ id: first.body.id, code: 'CORE_UNIQUE_VIOLATION' });
    });
  });
});
