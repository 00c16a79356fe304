import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';

const LONG_AGO = '2020-01-02 03:04:05';
const LONG_AGO_UNIX = Date.UTC(2020, 0, 2, 3, 4, 5) / 1000;

/** Listening, AtroCore's realtime: `startEntityListening` and the public endpoint (CONTRACT §16). */
describe.each(TEST_DBS)('listening on %s', (kind) => {
  let t: TestApi;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  /** The endpoint read without any token. */
  const publicGet = (endpoint: string) => request(t.server).get(`/${endpoint}`);
  /** Makes the record's logged changes and its last modification look old, so that a new write shows as a new timestamp. */
  const backdateChanges = async (id: string) => {
    await t.api.database.knex('record_change').where({ record_id: id }).update({ created_at: LONG_AGO });
    await t.api.database.knex('product').where({ id }).update({ modified_at: LONG_AGO });
  };
  const product = async () => (await t.post('/api/Product', { name: 'Listened' }).expect(200)).body.id as string;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('answers {timestamp, endpoint}; the endpoint answers {timestamp} without a token, and moves after every write', async () => {
      const id = await product();
      await backdateChanges(id);
      const started = await t.post(`${base}/startEntityListening`, { entityName: 'Product', entityId: id }).expect(200);
      expect(started.body).toEqual({ timestamp: LONG_AGO_UNIX, endpoint: `listening/entity/Product/${id}.json` });
      const first = await publicGet(started.body.endpoint).expect(200).expect('Content-Type', /json/);
      expect(first.body).toEqual({ timestamp: LONG_AGO_UNIX });
      const brandId = (await t.post('/api/Brand', { name: `Listening ${base}` }).expect(200)).body.id;
      const before = Math.floor(Date.now() / 1000);
      const writes = [
        () => t.patch(`${base}/Product/${id}`, { price: 1 }).expect(200),
        () => t.post(`${base}/Product/${id}/brand`, { id: brandId }).expect(200),
        () => t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { quantity: 2 } }).expect(200),
        () => t.del(`${base}/Product/${id}`).expect(200),
      ];
      for (const write of writes) {
        await backdateChanges(id);
        // every change of the record now seems made in that one second: the ms count its writes
        expect(Math.floor((await publicGet(started.body.endpoint).expect(200)).body.timestamp)).toBe(LONG_AGO_UNIX);
        await write();
        const { timestamp } = (await publicGet(started.body.endpoint).expect(200)).body;
        expect(typeof timestamp).toBe('number');
        expect(timestamp).toBeGreaterThanOrEqual(before);
        expect(timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
      }
    });

    it('moves after each of several writes made within one second, and stays within the second of the last', async () => {
      const id = await product();
      const { endpoint } = (await t.post(`${base}/startEntityListening`, { entityName: 'Product', entityId: id }).expect(200)).body;
      const seen = [(await publicGet(endpoint).expect(200)).body.timestamp as number];
      for (const price of [1, 2, 3, 4]) {
        await t.patch(`${base}/Product/${id}`, { price }).expect(200);
        seen.push((await publicGet(endpoint).expect(200)).body.timestamp);
      }
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]);
      const last = seen[seen.length - 1];
      const logged = await t.api.database.knex('record_change').where({ record_id: id }).orderBy('seq', 'desc').first('created_at');
      expect(Math.floor(last)).toBe(Date.parse(`${logged.created_at.replace(' ', 'T')}Z`) / 1000);
    });

    it('moves when the record is removed for good, and again when a new record takes its id, within one second', async () => {
      const id = `removed-${base.length}-${Date.now()}`;
      const seen: number[] = [];
      const read = async () => seen.push((await publicGet(`listening/entity/Brand/${id}.json`).expect(200)).body.timestamp as number);
      await t.post(`${base}/Brand`, { id, name: `Removed ${base}` }).expect(200);
      await t.post(`${base}/startEntityListening`, { entityName: 'Brand', entityId: id }).expect(200);
      await read();
      await t.del(`${base}/Brand/${id}`).set('permanently', 'true').expect(200);
      await read();
      await t.post(`${base}/Brand`, { id, name: `Again ${base}` }).expect(200);
      await read();
      await t.patch(`${base}/Brand/${id}`, { code: 'x' }).expect(200);
      await read();
      for (let i = 1; i < seen.length; i++) expect([i, seen[i]]).not.toEqual([i, seen[i - 1]]);
      for (const timestamp of seen) expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5);
    });

    it('answers 404 for a record nobody listens to, and once the last listening is older than eight hours', async () => {
      const id = await product();
      const endpoint = `listening/entity/Product/${id}.json`;
      expect((await publicGet(endpoint).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      await t.post(`${base}/startEntityListening`, { entityName: 'Product', entityId: id }).expect(200);
      await publicGet(endpoint).expect(200);
      const listened = t.api.database.knex('record_listening').where({ entity_type: 'Product', record_id: id });
      await listened.clone().update({ listened_at: Date.now() - 8 * 60 * 60 * 1000 + 60_000 });
      await publicGet(endpoint).expect(200);
      await listened.clone().update({ listened_at: Date.now() - 8 * 60 * 60 * 1000 - 1000 });
      await publicGet(endpoint).expect(404);
      // listening again opens it again
      await t.post(`${base}/startEntityListening`, { entityName: 'Product', entityId: id }).expect(200);
      await publicGet(endpoint).expect(200);
      for (const path of [`listening/entity/Nope/${id}.json`, `listening/entity/Product/${id}`, 'listening/entity/Product/no-such.json']) await publicGet(path).expect(404);
    });

    it('needs read access to the record: 403 without, 404 for a record hidden by own or missing; 400 for a bad body', async () => {
      const id = await product();
      const noRead = await userWithRole(t, { scopes: { Product: { read: 'no' }, Brand: { read: 'all' } } });
      const own = await userWithRole(t, { scopes: { Product: { read: 'own', create: true } } });
      const reader = await userWithRole(t, { scopes: { Product: { read: 'all' } } });
      const body = { entityName: 'Product', entityId: id };
      expect((await noRead.post(`${base}/startEntityListening`, body).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      expect((await own.post(`${base}/startEntityListening`, body).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      await publicGet(`listening/entity/Product/${id}.json`).expect(404);
      // reading is enough: no stream right needed
      expect((await reader.post(`${base}/startEntityListening`, body).expect(200)).body.endpoint).toBe(`listening/entity/Product/${id}.json`);
      const mine = (await own.post('/api/Product', { name: 'Mine' }).expect(200)).body.id;
      await own.post(`${base}/startEntityListening`, { entityName: 'Product', entityId: mine }).expect(200);
      await t.post(`${base}/startEntityListening`, { entityName: 'Product', entityId: 'no-such' }).expect(404);
      await t.post(`${base}/startEntityListening`, { entityName: 'Nope', entityId: id }).expect(404);
      for (const bad of [{ entityName: 'Product' }, { entityName: 'Product', entityId: 5 }, { entityId: id }, { ...body, extra: 1 }]) {
        expect((await t.post(`${base}/startEntityListening`, bad).expect(400)).body.error.code).toMatch(/^CORE_(VALIDATION_FAILED|UNKNOWN_FIELD)$/);
      }
      await request(t.server).post(`${base}/startEntityListening`).send(body).expect(401);
    });
  });
});
