/** What a queue tells the job it runs: whether this process may still run it. */
export interface JobLease {
  /** True once another process may take the job up (its lease ended): the job stops at its next safe point. */
  lost(): boolean;
}

/** Runs one delivered job under its lease. */
export type RunJob = (jobId: string, lease: JobLease) => Promise<void>;

/** Carries job ids to the processes that run them. The job table holds the truth. */
export interface JobQueue {
  /** Connects; with `run`, also takes jobs (`run` is called once per delivered job id). */
  start(run?: RunJob): Promise<void>;
  /** Hands a new job to the workers. */
  send(jobId: string): Promise<void>;
  stop(): Promise<void>;
}

/** How long a new job stays `Pending` at least: its request answers first, and it can be canceled before it runs. */
export const JOB_START_DELAY_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The lease of a job in the one process that owns the database: never lost. */
export const HELD_LEASE: JobLease = { lost: () => false };

/**
 * Runs jobs in this process, one at a time, in the order sent, each one not before
 * `startDelayMs` after it was sent: with a synchronous driver (SQLite) a job started at once would
 * run to its end before the request that started it answers, and could never be seen pending or
 * canceled. On start it takes up the jobs the table still lists as pending or running (a process
 * that died mid-job). For SQLite, where one process owns the database.
 */
export class InProcessQueue implements JobQueue {
  private chain: Promise<void> = Promise.resolve();
  private run?: RunJob;
  private stopped = false;

  constructor(
    private readonly unfinished: () => Promise<string[]>,
    private readonly startDelayMs = JOB_START_DELAY_MS,
  ) {}

  async start(run?: RunJob): Promise<void> {
    if (!run) return;
    this.run = run;
    for (const id of await this.unfinished()) await this.send(id);
  }

  async send(jobId: string): Promise<void> {
    const due = Date.now() + this.startDelayMs;
    this.chain = this.chain.then(async () => {
      if (due > Date.now()) await sleep(due - Date.now());
      if (this.stopped || !this.run) return;
      await this.run(jobId, HELD_LEASE).catch(() => undefined);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.chain;
  }
}
