import { PgBossQueue } from '../../src/jobs/pg-boss-queue';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';

/**
 * A job sent by a process that also runs jobs starts after the start delay, not at its worker's
 * next poll: with a poll every 60 s, the job still runs within seconds. It is not started at once
 * either: its request answers first, and it can be canceled while `Pending`.
 */
const onPostgres = TEST_DBS.includes('postgres') ? describe : describe.skip;

onPostgres('the PostgreSQL queue', () => {
  let db: TestDatabase;
  let queue: PgBossQueue | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await queue?.stop();
    await db.drop();
  });

  it('wakes its own worker for a job it sends, after the start delay, whatever the polling interval', async () => {
    queue = new PgBossQueue({ connectionString: db.url, pollingIntervalSeconds: 60 });
    const ran: { jobId: string; at: number }[] = [];
    let wake!: () => void;
    const first = new Promise<void>((resolve) => (wake = resolve));
    await queue.start(async (jobId) => {
      ran.push({ jobId, at: Date.now() });
      wake();
    });
    // The worker's first poll finds nothing; the next would be a minute later.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sentAt = Date.now();
    await queue.send('job-1');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('the job waited for the next poll')), 15_000)));
    await Promise.race([first, late]).finally(() => clearTimeout(timer));
    expect(ran.map((r) => r.jobId)).toEqual(['job-1']);
    expect(ran[0].at - sentAt).toBeGreaterThanOrEqual(200);
  });
});
