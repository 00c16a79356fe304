import PgBoss from 'pg-boss';
import type { JobQueue } from './queue';

export interface PgBossQueueOptions {
  connectionString: string;
  /** Seconds after which a job whose worker vanished is handed out again; default 900. */
  expireInSeconds?: number;
  /** How often idle workers look for work; default 1 s. */
  pollingIntervalSeconds?: number;
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
      supervise: true,
      // Expired jobs (their process died) are found by the maintenance run: keep it within the expiry.
      maintenanceIntervalSeconds: Math.max(1, Math.min(120, expire)),
    });
    this.boss.on('error', () => undefined);
  }

  async start(run?: (jobId: string) => Promise<void>): Promise<void> {
    await this.boss.start();
    this.started = true;
    await this.boss.createQueue(QUEUE, { name: QUEUE, retryLimit: 5, retryDelay: 1, expireInSeconds: this.options.expireInSeconds ?? 900 });
    if (!run) return;
    await this.boss.work<{ jobId: string }>(QUEUE, { pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 1, batchSize: 1 }, async (jobs) => {
      for (const job of jobs) await run(job.data.jobId);
    });
  }

  async send(jobId: string): Promise<void> {
    await this.boss.send(QUEUE, { jobId }, { expireInSeconds: this.options.expireInSeconds ?? 900, retryLimit: 5 });
  }

  async stop(): Promise<void> {
    if (this.started) await this.boss.stop({ graceful: false, wait: true });
  }
}
