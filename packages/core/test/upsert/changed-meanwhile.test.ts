import { Client } from 'pg';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { UPSERT_PATHS } from './support';

jest.setTimeout(60_000);

/** Waits until a statement of the database waits for a row lock (the upsert's write). */
async function untilWaitingForLock(client: Client, database: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await client.query(`select 1 from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`, [database]);
    if (rows.length) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no statement waited for the row lock');
}

/**
 * An upsert reads the records it names without locks and writes a row only if its record is still
 * at the version it read. Here another transaction changes the record between the upsert's read
 * and its write: the upsert decides again on the record as then stored. Its answer, its change and
 * the record's version show both writes (PostgreSQL: SQLite runs one writer at a time).
 */
describe.each(TEST_DBS.filter((kind) => kind === 'postgres'))('an upsert whose record changes between its read and its write on %s', (kind) => {
  let t: TestApi;
  let other: Client;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    other = new Client({ connectionString: t.db.url });
    await other.connect();
  });
  afterAll(async () => {
    await other.end();
    await t.close();
  });

  it.each(UPSERT_PATHS)('is decided again on the record as stored (generation %s)', async (g, path, base) => {
    const sku = `MEANWHILE-${g}`;
    const created = await t.post(`${base}/Product`, { name: 'before', sku, quantity: 1 }).expect(200);
    const id = created.body.id as string;
    const database = new URL(t.db.url).pathname.slice(1);

    await other.query('begin');
    await other.query(`update product set quantity = 2, record_version = record_version + 1 where id = $1`, [id]);
    // `then` sends the request now; it waits for the other transaction's row lock.
    const upsert = t.post(path, [{ entity: 'Product', payload: { sku, name: 'after' } }]).then((res) => res);
    await untilWaitingForLock(other, database);
    await other.query('commit');

    const res = await upsert;
    expect(res.status).toBe(200);
    expect(res.body[0]).toMatchObject({ status: 'Updated', entity: { id, name: 'after', quantity: 2 } });
    const read = await t.get(`${base}/Product/${id}`).expect(200);
    expect(read.body).toMatchObject({ name: 'after', quantity: 2 });
    // Created at 1, the other transaction's 2, the upsert's 3.
    expect(read.headers.etag).toBe('"3"');
    const stream = await t.get(`/api/entityStream?entityName=Product&id=${id}`).expect(200);
    expect(stream.body.list[0]).toMatchObject({ action: 'Update', diff: { name: { was: 'before', became: 'after' } } });
  });
});
