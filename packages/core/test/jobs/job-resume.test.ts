import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

jest.setTimeout(180_000);

/**
 * A process that dies after an upsert job wrote items but before it saved how far it got: the
 * next process runs those items again. Items without a lookup key (no id, no unique field) must
 * not be created twice.
 */
describe.each(TEST_DBS)('an upsert job run again after its process died, on %s', (kind) => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-resume-'));
    db = kind === 'sqlite' ? { kind, url: `sqlite:${path.join(dir, 'db.sqlite')}`, drop: async () => undefined } : await createTestDatabase(kind);
  });
  afterAll(async () => {
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const start = () => startTestApi(kind, { entities: testEntities, jobs: { queue: 'in-process' } }, db);

  it.each(GENERATIONS)('creates each keyless item once and still reports it Created (generation %s)', async (gen, base) => {
    const tag = `resumed-${gen}`;
    // Set-based items (name only), and items with a link object (the single-record path).
    const items = Array.from({ length: 700 }, (_, i) => ({
      entity: 'Product',
      payload: i % 7 === 0 ? { name: `${tag}-${i}`, brand: { name: `${tag}-brand` } } : { name: `${tag}-${i}`, quantity: i },
    }));
    let t: TestApi = await start();
    const { jobId } = (await t.post(`${base}/upsertAsync`, items).expect(200)).body;
    expect((await finishedJob(t, { base, id: jobId })).created).toBe(items.length);
    // As the job stood when its process died: every item written, no checkpoint saved yet, its input still there (an ended job keeps none).
    const payload = t.api.database.dialect.toDb('jsonObject', { items });
    await t.api.database.knex('job').update({ status: 'Running', progress: 0, processed: 0, result: null, created: 0, ended_at: null, payload }).where({ id: jobId });
    await t.close();

    t = await start();
    try {
      const job = await finishedJob(t, { base, id: jobId });
      expect(job).toMatchObject({ status: 'Success', created: items.length, updated: 0, notModified: 0, failed: 0 });
      expect(job.result.every((r: { status: string }) => r.status === 'Created')).toBe(true);
      const where = `where[0][type]=startsWith&where[0][attribute]=name&where[0][value]=${tag}-`;
      const stored = (await t.get(`${base}/Product?${where}&select=name&maxSize=1000`).expect(200)).body;
      expect(stored.total).toBe(items.length);
      expect(new Set(stored.list.map((p: { name: string }) => p.name)).size).toBe(items.length);
      expect((await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=${tag}-brand&totalOnly=true`).expect(200)).body.total).toBe(1);
      // The results name the records as stored.
      const ids = job.result.map((r: { entity: { id: string } }) => r.entity.id);
      expect(new Set(ids).size).toBe(items.length);
      expect(ids.filter((id: string) => !stored.list.some((p: { id: string }) => p.id === id))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
