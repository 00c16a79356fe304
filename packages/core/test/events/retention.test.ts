import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { durableDatabase } from '../../../../test/support/instances';
import { testEntities } from '../../../../test/support/fixtures';

const DAY = 24 * 60 * 60 * 1000;
/** `YYYY-MM-DD HH:MM:SS` (UTC) of `days` days ago. */
const daysAgo = (days: number) => new Date(Date.now() - days * DAY).toISOString().slice(0, 19).replace('T', ' ');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The change log keeps changes for `changes.retentionDays` (default 30); each instance sweeps it when it starts (CONTRACT §16). */
describe.each(TEST_DBS)('change log retention on %s', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    // one database for several instances in turn: a file for SQLite
    db = await durableDatabase(kind);
  });
  afterAll(async () => {
    await db.drop();
  });

  /** The seqs of a record's changes, newest first (read as the admin). */
  const seqsOf = async (t: TestApi, id: string): Promise<string[]> => (await t.get(`/api/v1/Product/${id}/stream?maxSize=200`).expect(200)).body.list.map((c: { id: string }) => c.id);
  /** Waits until the start-up sweep has left `count` changes of the record (it runs beside the requests). */
  const settled = async (t: TestApi, id: string, count: number) => {
    for (let i = 0; i < 100 && (await seqsOf(t, id)).length !== count; i++) await sleep(50);
    return seqsOf(t, id);
  };

  it('purges the changes older than the retention when an instance starts, keeps the recent ones, and forgets old listening', async () => {
    const first = await startTestApi(kind, { entities: testEntities }, db);
    let id: string;
    let all: string[];
    try {
      id = (await first.post('/api/Product', { name: 'Kept a while', price: 1 }).expect(200)).body.id;
      for (let price = 2; price <= 5; price++) await first.patch(`/api/Product/${id}`, { price }).expect(200);
      await first.post('/api/startEntityListening', { entityName: 'Product', entityId: id }).expect(200);
      all = await seqsOf(first, id);
      expect(all).toHaveLength(5);
      const [, , middle, , oldest] = all;
      const changes = () => first.api.database.knex('record_change');
      // the create and the first update: older than 30 days; the third: 29 days; the others today
      await changes().whereIn('seq', [Number(oldest), Number(all[3])]).update({ created_at: daysAgo(31) });
      await changes().where('seq', Number(middle)).update({ created_at: daysAgo(29) });
      await first.api.database.knex('record_listening').update({ listened_at: Date.now() - 9 * 60 * 60 * 1000 });
    } finally {
      await first.api.close();
    }
    const second = await startTestApi(kind, { entities: testEntities }, db);
    try {
      expect(await settled(second, id, 3)).toEqual(all.slice(0, 3));
      expect(await second.api.database.knex('record_listening').where({ record_id: id })).toEqual([]);
      // the stream pages what is left; a new write is logged as ever
      await second.patch(`/api/Product/${id}`, { price: 6 }).expect(200);
      expect(await seqsOf(second, id)).toHaveLength(4);
    } finally {
      await second.api.close();
    }
    // a shorter retention: the change of 29 days ago goes too
    const third = await startTestApi(kind, { entities: testEntities, changes: { retentionDays: 7 } }, db);
    try {
      const left = await settled(third, id, 3);
      expect(left).toHaveLength(3);
      expect(left).not.toContain(all[2]);
      expect(left.slice(1)).toEqual(all.slice(0, 2));
    } finally {
      await third.api.close();
    }
  });
});
