import PgBoss from 'pg-boss';
import { statementTimeout } from '../sql/dialects/postgres';
import type { JobQueue } from './queue';

export interface PgBossQueueOptions {
  connectionString: string;
  /** Seconds after which a job whose worker vanished is handed out again; default 900. */
  expireInSeconds?: number;
  /** How often idle workers look for work; default 1 s. */
  pollingIntervalSeconds?: number;
  /** The instance's `statementTimeoutMs`: the queue's statements run under it too. */
  statementTimeoutMs?: number;
}

const QUEUE = 'entity-records-jobs';

/**
 * A PostgreSQL-backed queue (pg-boss): any number of processes share the work, and a job whose
 * process died is retried after its expiry.
 */
export class PgBossQueue implements JobQueue {
  private readonly boss: PgBoss;
  private started = false;

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
  }

  async start(run?: (jobId: string) => Promise<void>): Promise<void> {
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
    await this.boss.work<{ jobId: string }>(QUEUE, { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 1, batchSize: 1 }, async (jobs) => {
      for (const job of jobs) await run(job.data.jobId);
    });
  }

  async send(jobId: string): Promise<void> {
    await this.boss.send(QUEUE, { jobId }, { expireInSeconds: this.options.expireInSeconds ?? 900, retryLimit: 5 });
  }

  /** Waits for the running job to hand back (the job service interrupts it at its next chunk). */
  async stop(): Promise<void> {
    if (this.started) await this.boss.stop({ graceful: true, wait: true, timeout: 15_000 });
  }
}
