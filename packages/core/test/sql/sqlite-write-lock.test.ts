import BetterSqlite3 from 'better-sqlite3';
import { defineEntity } from '@entity-records/core';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { durableDatabase } from '../../../../test/support/instances';
import { holdWriteLock } from '../../../../test/support/sqlite-lock';
import type { TestDatabase } from '../../../../test/support/databases';

/**
 * Another connection to the same SQLite file (another process, a tool) holds the write lock: a
 * write of ours waits its turn without freezing the process, then reads what the other wrote; one
 * that waits longer than 5 s answers 503 with `Retry-After` and stores nothing.
 */
const describeSqlite = TEST_DBS.includes('sqlite') ? describe : describe.skip;

const Brand = defineEntity({ name: 'Brand', fields: { name: { type: 'varchar', required: true, unique: true } } });
const Product = defineEntity({ name: 'Product', fields: { name: { type: 'varchar', required: true }, brand: { type: 'link', entity: 'Brand' } } });

describeSqlite('a write on SQLite while another connection holds the write lock', () => {
  let db: TestDatabase;
  let t: TestApi;
  let other: BetterSqlite3.Database;
  beforeEach(async () => {
    db = await durableDatabase('sqlite');
    t = await startTestApi('sqlite', { entities: [Brand, Product] }, db);
    other = new BetterSqlite3(db.url.slice('sqlite:'.length), { timeout: 0 });
  });
  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await t.close();
    await db.drop();
  });

  it('waits for it in turns of the event loop, then finds what the other connection stored', async () => {
    const lock = holdWriteLock(other, { ms: 300, write: (db) => db.prepare("insert into brand (id, name, deleted) values ('b-other', 'Made elsewhere', 0)").run() });
    try {
      // Finds the brand by name (a read), then writes: the read must see the other's row.
      const res = await t.post('/api/Product', { name: 'Waited', brand: { name: 'Made elsewhere' } });
      expect(res.status).toBe(200);
      expect(res.body.brandId).toBe('b-other');
      expect(lock.released()).toBe(true);
      // The process went on while it waited (the driver's own busy wait fires no timer).
      expect(lock.turns()).toBeGreaterThan(3);
    } finally {
      lock.stop();
    }
    expect((await t.get('/api/Brand?totalOnly=true')).body.total).toBe(1);
  });

  it('answers 503 with Retry-After after 5 s, and stores nothing', async () => {
    other.exec('BEGIN IMMEDIATE');
    const res = await t.post('/api/Product', { name: 'Never', brand: { name: 'Never either' } });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('CORE_DATABASE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
    other.exec('ROLLBACK');
    expect((await t.get('/api/Product?totalOnly=true')).body.total).toBe(0);
    expect((await t.get('/api/Brand?totalOnly=true')).body.total).toBe(0);
  }, 20_000);
});
