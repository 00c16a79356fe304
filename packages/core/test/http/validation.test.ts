import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('bad input on %s', (kind) => {
  let t: TestApi;
  const count = async (entity: string) => (await t.get(`/api/${entity}?totalOnly=true`).expect(200)).body.total as number;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, maxBodySize: '64kb' });
  });
  afterAll(() => t.close());

  it('answers 415 in generation A for a body that is not JSON, and reads it as JSON in B', async () => {
    const before = await count('Brand');
    const a = await request(t.server).post('/api/Brand').set('Authorization-Token', t.token).set('Content-Type', 'text/plain').send('{"name":"Plain A"}');
    expect(a.status).toBe(415);
    expect(a.body.error.code).toBe('CORE_UNSUPPORTED_MEDIA_TYPE');
    expect(a.headers['x-status-reason']).toBeTruthy();
    await request(t.server).patch('/api/Brand/x').set('Authorization-Token', t.token).set('Content-Type', 'application/xml').send('<a/>').expect(415);
    const b = await request(t.server).post('/api/v1/Brand').set('Authorization-Token', t.token).set('Content-Type', 'text/plain').send('{"name":"Plain B"}');
    expect(b.status).toBe(200);
    expect(await count('Brand')).toBe(before + 1);
  });

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('answers 400 for malformed JSON and changes nothing', async () => {
      const before = await count('Brand');
      const res = await request(t.server).post(`${base}/Brand`).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send('{"name": ');
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'CORE_INVALID_JSON', message: 'The body is not valid JSON', details: {} });
      for (const single of ['null', '"Brand"', '42', 'true']) {
        const value = await request(t.server).post(`${base}/Brand`).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send(single).expect(400);
        expect(value.body.error).toEqual({ code: 'CORE_INVALID_JSON', message: 'The body must be a JSON object or array, not a single value', details: {} });
      }
      expect(await count('Brand')).toBe(before);
    });

    it('answers 400 with issues for unknown fields, wrong types, missing required fields and bad values', async () => {
      const before = await count('Product');
      const unknown = await t.post(`${base}/Product`, { name: 'X', colour: 'red' }).expect(400);
      expect(unknown.body.error).toMatchObject({ code: 'CORE_UNKNOWN_FIELD', details: { issues: [{ path: ['colour'], code: 'unknown_field' }] } });
      const typed = await t.post(`${base}/Product`, { name: 'X', price: 'cheap', quantity: 1.5, isActive: 'yes' }).expect(400);
      expect(typed.body.error.code).toBe('CORE_VALIDATION_FAILED');
      const paths = typed.body.error.details.issues.map((i: { path: string[] }) => i.path.join('.')).sort();
      expect(paths).toEqual(['isActive', 'price', 'quantity']);
      const missing = await t.post(`${base}/Product`, { sku: 'no-name' }).expect(400);
      expect(missing.body.error.details.issues).toEqual([expect.objectContaining({ path: ['name'], code: 'required' })]);
      await t.post(`${base}/Product`, { name: '' }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', color: 'purple' }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', labels: ['new', 'old'] }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', releaseDate: '2024-02-30' }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', availableAt: 'yesterday' }).expect(400);
      // an instant whose UTC form leaves the years 0001 to 9999 could not be written back as read
      await t.post(`${base}/Product`, { name: 'X', availableAt: '9999-12-31T23:30:00-01:00' }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', availableAt: '0001-01-01T00:30:00+01:00' }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', releaseDate: '0000-01-01' }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', price: -1 }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', quantity: 2 ** 40 }).expect(400);
      await t.post(`${base}/Brand`, { name: 'Long code', code: 'x'.repeat(21) }).expect(400);
      await t.post(`${base}/Product`, { name: 'X', specs: [1, 2] }).expect(400);
      await t.post(`${base}/Product`, ['not', 'an', 'object']).expect(400);
      expect(await count('Product')).toBe(before);
    });

    it('accepts a client id of [A-Za-z0-9_-]{1,64} and refuses others', async () => {
      const id = `client_${base.length}-id`;
      const created = await t.post(`${base}/Brand`, { id, name: `Client id ${base}` }).expect(200);
      expect(created.body.id).toBe(id);
      await t.post(`${base}/Brand`, { id, name: `Other ${base}` }).expect(409);
      for (const bad of ['has space', 'a/b', 'x'.repeat(65), '../etc', 'ümlaut']) {
        const res = await t.post(`${base}/Brand`, { id: bad, name: `Bad ${bad}` }).expect(400);
        expect(res.body.error.code).toBe('CORE_INVALID_ID');
      }
    });

    it('refuses changing read-only fields but accepts derived fields sent back unchanged', async () => {
      await t.post(`${base}/Product`, { name: 'RO', internalNote: 'x' }).expect(400);
      const product = await t.post(`${base}/Product`, { name: 'Round trip' }).expect(200);
      const { id } = product.body;
      const back = await t.put(`${base}/Product/${id}`, { ...product.body, quantity: 3 }).expect(200);
      expect(back.body.quantity).toBe(3);
      expect(back.body.createdAt).toBe(product.body.createdAt);
      await t.patch(`${base}/Product/${id}`, { internalNote: 'changed' }).expect(400);
      await t.patch(`${base}/Product/${id}`, { id: 'other' }).expect(400);
    });

    it('keeps modifiedAt when an update changes nothing', async () => {
      const product = await t.post(`${base}/Product`, { name: 'Same', price: 2.5, labels: ['new'] }).expect(200);
      await new Promise((r) => setTimeout(r, 1100));
      const same = await t.patch(`${base}/Product/${product.body.id}`, { name: 'Same', price: 2.5, labels: ['new'] }).expect(200);
      expect(same.body.modifiedAt).toBe(product.body.modifiedAt);
      const changed = await t.patch(`${base}/Product/${product.body.id}`, { price: 3 }).expect(200);
      expect(changed.body.modifiedAt > product.body.modifiedAt).toBe(true);
    });

    it('answers 413 for a body over the limit', async () => {
      const res = await t.post(`${base}/Product`, { name: 'big', description: 'x'.repeat(70 * 1024) }).expect(413);
      expect(res.body.error.code).toBe('CORE_PAYLOAD_TOO_LARGE');
    });

    it('normalizes date-times to UTC and stores every field type', async () => {
      const storedAsSent = {
        releaseDate: '2024-03-01',
        isActive: false,
        labels: ['sale', 'eco'],
        specs: { weight: 2, tags: ['a'] },
        color: 'blue',
        quantity: -5,
        price: 0.1,
      };
      const res = await t.post(`${base}/Product`, { name: 'Typed', availableAt: '2024-03-01T12:30:00+02:00', ...storedAsSent }).expect(200);
      const read = await t.get(`${base}/Product/${res.body.id}`).expect(200);
      expect(read.body).toMatchObject({ availableAt: '2024-03-01 10:30:00', ...storedAsSent });
    });

    it('takes dates and date-times of every year from 0001 to 9999, the first century too, and gives them back as sent', async () => {
      const edges = [
        { releaseDate: '0050-01-01', availableAt: '0050-06-01 10:00:00' },
        { releaseDate: '0001-01-01', availableAt: '0001-01-01 00:00:00' },
        { releaseDate: '9999-12-31', availableAt: '9999-12-31 23:59:59' },
      ];
      for (const values of edges) {
        const res = await t.post(`${base}/Product`, { name: 'Edge', ...values }).expect(200);
        expect(res.body).toMatchObject(values);
        expect((await t.get(`${base}/Product/${res.body.id}`).expect(200)).body).toMatchObject(values);
        await t.patch(`${base}/Product/${res.body.id}`, values).expect(200);
      }
    });
  });
});
