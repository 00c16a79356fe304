/** Carries job ids to the processes that run them. The job table holds the truth. */
export interface JobQueue {
  /** Connects; with `run`, also takes jobs (`run` is called once per delivered job id). */
  start(run?: (jobId: string) => Promise<void>): Promise<void>;
  /** Hands a new job to the workers. */
  send(jobId: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs jobs in this process, one at a time, in the order sent. On start it takes up the jobs the
 * table still lists as pending or running (a process that died mid-job). For SQLite, where one
 * process owns the database.
 */
export class InProcessQueue implements JobQueue {
  private chain: Promise<void> = Promise.resolve();
  private run?: (jobId: string) => Promise<void>;
  private stopped = false;

  constructor(private readonly unfinished: () => Promise<string[]>) {}

  async start(run?: (jobId: string) => Promise<void>): Promise<void> {
    if (!run) return;
    this.run = run;
    for (const id of await this.unfinished()) await this.send(id);
  }

  async send(jobId: string): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.stopped || !this.run) return;
      await this.run(jobId).catch(() => undefined);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.chain;
  }
}
