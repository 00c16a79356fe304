import { BootError, createEntityApi, definePlugin } from '@entity-records/core';
import request from 'supertest';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';

/** A plugin that adds a key to the public data: its value changes with each request, as a provider may. */
let served = 0;
const announcements = definePlugin({
  name: 'announcements',
  setup: (api) => api.addPublicData('announcements', async () => ({ text: 'Maintenance on Sunday', served: ++served })),
});

/** `GET /data/publicData.json` (CONTRACT §16). */
describe.each(TEST_DBS)('public data on %s', (kind) => {
  let t: TestApi;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, plugins: [announcements] });
  });
  afterAll(() => t.close());

  const publicData = async () => (await request(t.server).get('/data/publicData.json').expect(200).expect('Content-Type', /json/)).body;

  it('needs no token and answers dataTimestamp, Unix seconds of the last change of anything, moving with each write', async () => {
    await t.post('/api/Product', { name: 'Public' }).expect(200);
    await t.api.database.knex('record_change').update({ created_at: '2021-05-06 07:08:09' });
    const old = await publicData();
    expect(old.dataTimestamp).toBe(Date.UTC(2021, 4, 6, 7, 8, 9) / 1000);
    const before = Math.floor(Date.now() / 1000);
    const id = (await t.post('/api/v1/Brand', { name: 'Public brand' }).expect(200)).body.id;
    const moved = (await publicData()).dataTimestamp;
    expect(typeof moved).toBe('number');
    expect(moved).toBeGreaterThanOrEqual(before);
    expect(moved).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    // any write of anything: a delete too
    await t.api.database.knex('record_change').update({ created_at: '2021-05-06 07:08:09' });
    await t.del(`/api/Brand/${id}`).expect(200);
    expect((await publicData()).dataTimestamp).toBeGreaterThanOrEqual(before);
  });

  it('carries the keys plugins add, and the same answer whoever asks', async () => {
    const user = await userWithRole(t, { scopes: { Product: { read: 'all' } } });
    const anonymous = await publicData();
    expect(anonymous.announcements).toEqual({ text: 'Maintenance on Sunday', served: expect.any(Number) });
    expect(Object.keys(anonymous).sort()).toEqual(['announcements', 'dataTimestamp']);
    for (const token of [t.token, user.token, 'not-a-token']) {
      const res = await request(t.server).get('/data/publicData.json').set('Authorization-Token', token).expect(200);
      expect({ ...res.body, announcements: { ...res.body.announcements, served: 0 } }).toEqual({ ...anonymous, announcements: { ...anonymous.announcements, served: 0 } });
    }
    expect((await publicData()).announcements.served).toBeGreaterThan(anonymous.announcements.served);
  });

  it('answers 0 before any change', async () => {
    const fresh = await startTestApi(kind, { entities: testEntities });
    try {
      await fresh.api.database.knex('record_change').delete();
      expect((await request(fresh.server).get('/data/publicData.json').expect(200)).body).toEqual({ dataTimestamp: 0 });
    } finally {
      await fresh.close();
    }
  });
});

describe('public data keys', () => {
  it('refuses a key given twice, or core’s own, at start-up', () => {
    for (const key of ['dataTimestamp', 'announcements']) {
      const clash = definePlugin({ name: `clash-${key}`, setup: (api) => api.addPublicData(key, () => 1) });
      let error: unknown;
      try {
        createEntityApi({ database: 'sqlite::memory:', entities: testEntities, plugins: [announcements, clash] });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(BootError);
      expect((error as BootError).message).toContain(`public data '${key}' is given twice`);
    }
  });
});
