import pg from 'pg';
import PgBoss from 'pg-boss';
import { advisoryKey, statementTimeout } from '../sql/dialects/postgres';
import { JOB_START_DELAY_MS, type JobQueue, type RunJob } from './queue';

export interface PgBossQueueOptions {
  connectionString: string;
  /** Seconds after which pg-boss hands a job out again (the last resort: see the class); default 900. */
  expireInSeconds?: number;
  /** How often idle workers look for work sent by other processes; default 1 s (this process's own wake its worker). */
  pollingIntervalSeconds?: number;
  /** The instance's `statementTimeoutMs`: the queue's statements run under it too. */
  statementTimeoutMs?: number;
  /** Milliseconds before this process's worker is woken for a job it sent; default JOB_START_DELAY_MS. */
  startDelayMs?: number;
  /** The ids of the jobs the job table lists as `Running`: those a sweep judges. */
  running?: () => Promise<string[]>;
  /** How often a worker looks for running jobs whose process died; default 5 s. */
  sweepIntervalSeconds?: number;
}

const QUEUE = 'entity-records-jobs';

/** The `application_name` of the sessions that hold job leases (`pg_stat_activity` shows it). */
export const LEASE_APPLICATION = 'entity-records job lease';

/** The advisory lock a process holds while it runs a job. */
const leaseKey = (jobId: string): string => advisoryKey(`entity-records job ${jobId}`);

/**
 * A PostgreSQL-backed queue (pg-boss): any number of processes share the work.
 *
 * A process runs a job only while it holds the job's lease: a session advisory lock on a
 * connection of its own, which PostgreSQL frees when that session ends, also when the process is
 * killed. So no two processes run one job at once (a job pg-boss hands out again after its expiry
 * while it still runs is left to the process running it), and a job the table lists as `Running`
 * whose lease nobody holds has lost its process: every worker sweeps for such jobs at start and
 * every few seconds and hands them out again, where they resume from their last checkpoint. pg-boss's
 * own expiry stays as the last resort.
 */
export class PgBossQueue implements JobQueue {
  private readonly boss: PgBoss;
  /** Connections for leases (held while a job runs) and sweeps. */
  private readonly leases: pg.Pool;
  private sweeper?: NodeJS.Timeout;
  private started = false;
  /** This process's worker, when it takes jobs. */
  private workerId?: string;

  constructor(private readonly options: PgBossQueueOptions) {
    const expire = options.expireInSeconds ?? 900;
    this.boss = new PgBoss({
      connectionString: options.connectionString,
      schema: 'pgboss',
      max: 3,
      // Passed on to pg's pool (pg-boss's types do not name it): a queue statement waiting on a
      // lock ends as the instance's own statements do, not never.
      ...({ statement_timeout: statementTimeout(options.statementTimeoutMs) } as object),
      supervise: true,
      // Expired jobs (their process died) are found by the maintenance run: keep it within the expiry.
      maintenanceIntervalSeconds: Math.max(1, Math.min(120, expire)),
    });
    this.boss.on('error', () => undefined);
    this.leases = new pg.Pool({ connectionString: options.connectionString, max: 2, statement_timeout: statementTimeout(options.statementTimeoutMs), application_name: LEASE_APPLICATION });
    this.leases.on('error', () => undefined);
  }

  async start(run?: RunJob): Promise<void> {
    await this.boss.start();
    this.started = true;
    // Processes starting together may deadlock creating the queue; the loser tries again.
    for (let attempt = 1; ; attempt++) {
      try {
        if (!(await this.boss.getQueue(QUEUE))) {
          await this.boss.createQueue(QUEUE, { name: QUEUE, retryLimit: 5, retryDelay: 1, expireInSeconds: this.options.expireInSeconds ?? 900 });
        }
        break;
      } catch (error) {
        if (attempt >= 5 || (error as { code?: string }).code !== '40P01') throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
    if (!run) return;
    this.workerId = await this.boss.work<{ jobId: string }>(QUEUE, { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 1, batchSize: 1 }, async (jobs) => {
      for (const job of jobs) await this.runLeased(job.data.jobId, run);
    });
    await this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), (this.options.sweepIntervalSeconds ?? 5) * 1000);
    this.sweeper.unref();
  }

  /**
   * Runs a job while holding its lease; a job whose lease another process holds runs there
   * already. When the lease's session ends under it (the connection dropped, the server ended
   * the session), another process's sweep may take the job up: this run is told so and stops at
   * its next safe point.
   */
  private async runLeased(jobId: string, run: RunJob): Promise<void> {
    const client = await this.leases.connect();
    let held = false;
    let lost = false;
    const onLost = () => (lost = true);
    client.on('error', onLost);
    client.on('end', onLost);
    try {
      held = (await client.query<{ held: boolean }>('select pg_try_advisory_lock($1::bigint) as held', [leaseKey(jobId)])).rows[0].held;
      if (held) await run(jobId, { lost: () => lost });
    } finally {
      client.off('error', onLost);
      client.off('end', onLost);
      // Ending the session frees the lock, whatever happened meanwhile.
      client.release(held || lost);
    }
  }

  /** Hands out again the running jobs whose lease nobody holds: their process died. */
  async sweep(): Promise<string[]> {
    if (!this.options.running) return [];
    const orphans: string[] = [];
    try {
      const running = await this.options.running();
      if (!running.length) return [];
      const client = await this.leases.connect();
      try {
        for (const jobId of running) {
          const key = leaseKey(jobId);
          if (!(await client.query<{ held: boolean }>('select pg_try_advisory_lock($1::bigint) as held', [key])).rows[0].held) continue;
          await client.query('select pg_advisory_unlock($1::bigint)', [key]);
          orphans.push(jobId);
        }
      } finally {
        client.release();
      }
      for (const jobId of orphans) await this.send(jobId);
    } catch {
      // The database is away: the next sweep tries again.
    }
    return orphans;
  }

  /**
   * Hands a job out once the start delay has passed by the database's clock (`startAfter`, in
   * seconds): no worker of any process takes it sooner, so a job canceled within the delay never
   * starts. This process's own worker, when idle, looks for it then instead of at its next poll
   * (up to a polling interval later); workers of other processes find it at their next poll.
   */
  async send(jobId: string): Promise<void> {
    const delayMs = this.options.startDelayMs ?? JOB_START_DELAY_MS;
    const startAfter = delayMs > 0 ? { startAfter: delayMs / 1000 } : {};
    await this.boss.send(QUEUE, { jobId }, { expireInSeconds: this.options.expireInSeconds ?? 900, retryLimit: 5, ...startAfter });
    const workerId = this.workerId;
    if (workerId !== undefined) setTimeout(() => this.boss.notifyWorker(workerId), delayMs).unref();
  }

  /** Waits for the running job to hand back (the job service interrupts it at its next chunk). */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    if (this.started) await this.boss.stop({ graceful: true, wait: true, timeout: 15_000 });
    await this.leases.end();
  }
}
