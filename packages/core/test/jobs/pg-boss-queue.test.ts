import knex, { type Knex } from 'knex';
import { JobInterrupted, systemContext } from '@entity-records/core';
import { LEASE_APPLICATION, PgBossQueue } from '../../src/jobs/pg-boss-queue';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

const onPostgres = TEST_DBS.includes('postgres') ? describe : describe.skip;

/** Resolves when `done` does, fails after `ms` with `message`. */
async function within<TValue>(ms: number, done: Promise<TValue>, message: string): Promise<TValue> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([done, late]).finally(() => clearTimeout(timer));
}

onPostgres('the PostgreSQL queue', () => {
  let db: TestDatabase;
  let admin: Knex;
  const queues: PgBossQueue[] = [];
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    admin = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    for (const queue of queues) await queue.stop();
    await admin.destroy();
    await db.drop();
  });

  /**
   * A job sent by a process that also runs jobs starts after the start delay, not at its worker's
   * next poll: with a poll every 60 s, the job still runs within seconds. It is not started at once
   * either: its request answers first, and it can be canceled while `Pending`.
   */
  it('wakes its own worker for a job it sends, after the start delay, whatever the polling interval', async () => {
    const queue = new PgBossQueue({ connectionString: db.url, pollingIntervalSeconds: 60 });
    queues.push(queue);
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
    await within(15_000, first, 'the job waited for the next poll');
    expect(ran.map((r) => r.jobId)).toEqual(['job-1']);
    expect(ran[0].at - sentAt).toBeGreaterThanOrEqual(200);
  });

  /**
   * A job runs only under its lease, a session of its own; when that session ends under the job
   * (the connection dropped, the server ended it), another process's sweep may take the job up, so
   * the run is told its lease is lost and stops at its next safe point.
   */
  it('tells a running job that its lease is lost when the lease session ends', async () => {
    const queue = new PgBossQueue({ connectionString: db.url });
    queues.push(queue);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let stopped!: (lost: boolean) => void;
    const ended = new Promise<boolean>((resolve) => (stopped = resolve));
    await queue.start(async (_jobId, lease) => {
      started();
      const until = Date.now() + 20_000;
      while (!lease.lost() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      stopped(lease.lost());
    });
    await queue.send('job-2');
    await within(15_000, running, 'the job did not start');
    const terminated = await admin.raw('select pg_terminate_backend(pid) as ended from pg_stat_activity where application_name = ? and datname = current_database() and pid <> pg_backend_pid()', [LEASE_APPLICATION]);
    expect(terminated.rows.map((r: { ended: boolean }) => r.ended)).toContain(true);
    expect(await within(15_000, ended, 'the job never learned that its lease was lost')).toBe(true);
  });
});

/**
 * The same through an instance: a host job whose lease session ends under it stops at its next
 * safe point (`stopping()`), is handed out again and ends there; a client reads `Success`.
 */
onPostgres('a job whose lease is lost, in an instance', () => {
  let t: TestApi;
  const runs: { interrupted: boolean }[] = [];
  let running!: () => void;
  const started = new Promise<void>((resolve) => (running = resolve));

  beforeAll(async () => {
    t = await startTestApi('postgres', { entities: testEntities });
    t.api.jobs.define('leased', async (run) => {
      const mine = { interrupted: false };
      runs.push(mine);
      running();
      // The first run waits for its lease to go; the second ends at once.
      const until = Date.now() + 20_000;
      while (runs.length === 1 && Date.now() < until) {
        if (run.stopping()) {
          mine.interrupted = true;
          throw new JobInterrupted();
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return { runs: runs.length };
    });
  });
  afterAll(() => t.close());

  it('is interrupted, runs again and succeeds', async () => {
    const id = await t.api.jobs.start('leased', {}, systemContext());
    await within(15_000, started, 'the job did not start');
    const { knex: db } = t.api.database;
    // The session that holds the job's lease: an advisory lock on a lease connection.
    const ended = await db.raw(
      "select pg_terminate_backend(a.pid) as ended from pg_stat_activity a join pg_locks l on l.pid = a.pid and l.locktype = 'advisory' where a.application_name = ? and a.datname = current_database()",
      [LEASE_APPLICATION],
    );
    expect(ended.rows.map((r: { ended: boolean }) => r.ended)).toContain(true);
    for (const [, base] of GENERATIONS) {
      expect(await finishedJob(t, { base, id }, { withinMs: 30_000 })).toMatchObject({ status: 'Success', result: { runs: 2 } });
    }
    expect(runs).toEqual([{ interrupted: true }, { interrupted: false }]);
  });
});
