import type { ContextUser, RequestContext } from '../context';
import { ApiError } from '../errors';
import type { JobStore, StoredJob } from '../sql/job-store';
import { MAX_JSON_DEPTH, nestsDeeper } from '../util/json-depth';
import { uuidv7 } from '../util/uuid';
import type { JobQueue } from './queue';

/** What a job handler gets: its payload, the context of the user who started it, a checkpoint. */
export interface JobRun {
  id: string;
  payload: Record<string, unknown>;
  ctx: RequestContext;
  /** Units of work already done (when an interrupted job runs again). */
  processed: number;
  /** The partial result saved with the last checkpoint. */
  partial: unknown;
  /** Saves how far the job got; a job that runs again resumes from there. */
  checkpoint(processed: number, progress: number, partial: unknown): Promise<void>;
  /** True once the process is stopping: a handler throws `JobInterrupted` at its next safe point. */
  stopping(): boolean;
}

/** Thrown by a handler that stops early because its process is stopping; the job runs again later. */
export class JobInterrupted extends Error {
  constructor() {
    super('The process stopped before the job ended; it runs again from its last checkpoint');
    this.name = 'JobInterrupted';
  }
}

export type JobHandler = (run: JobRun) => Promise<unknown>;

interface JobServiceOptions {
  /** The user a job runs as (and the admin who acted for them); undefined once removed. */
  loadUser: (id: string) => Promise<ContextUser | undefined>;
  /** Told of every failed job, with what it threw. */
  onError: (jobId: string, error: unknown) => void;
}

/** Starts jobs, runs them through a queue, and records their outcome in the Job table. */
export class JobService {
  private readonly handlers = new Map<string, JobHandler>();
  private isStopping = false;

  constructor(
    private readonly store: JobStore,
    private readonly queue: JobQueue,
    private readonly options: JobServiceOptions,
  ) {}

  register(type: string, handler: JobHandler): void {
    this.handlers.set(type, handler);
  }

  /**
   * Records a pending job for the context's user, with the path generation of its request, and
   * hands it to the queue; answers its id. The job runs with that generation.
   */
  async enqueue(type: string, payload: Record<string, unknown>, ctx: RequestContext): Promise<string> {
    if (!this.handlers.has(type)) throw new ApiError('CORE_INTERNAL', `No handler for job type '${type}'`);
    // A payload is a body (or a value made from one) under one key: stored as JSON and read back
    // by handlers, it must nest no deeper than a body may.
    if (nestsDeeper(payload, MAX_JSON_DEPTH + 1)) {
      throw new ApiError('CORE_INVALID_JSON', `A job's input must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`, { details: { maxDepth: MAX_JSON_DEPTH } });
    }
    const id = uuidv7();
    // The path generation changes what a write checks (an Attribute's code); the headers of the
    // request change only what it reads, or are refused before a job starts (flattened attributes).
    const context = ctx.generation ? { generation: ctx.generation } : {};
    await this.store.insert({ id, type, payload, context, userId: ctx.user?.id ?? null, actorId: ctx.actor?.id ?? null });
    await this.queue.send(id);
    return id;
  }

  /** Connects the queue; a worker also takes jobs (API-only processes only send them). */
  start(worker = true): Promise<void> {
    return this.queue.start(worker ? (jobId) => this.run(jobId) : undefined);
  }

  stop(): Promise<void> {
    this.isStopping = true;
    return this.queue.stop();
  }

  /** Runs one job to its end; a job already finished or canceled is left alone. */
  async run(jobId: string): Promise<void> {
    const job = await this.store.get(jobId);
    if (!job || !(await this.store.claim(jobId))) return;
    try {
      const result = await this.execute(job);
      await this.store.finish(jobId, { status: 'Success', result, message: null });
    } catch (error) {
      // Left Running: the queue hands it out again (pg-boss retries; the in-process queue resumes it on start).
      if (error instanceof JobInterrupted) throw error;
      this.options.onError(jobId, error);
      const message = error instanceof ApiError ? error.message : 'The job failed';
      await this.store.finish(jobId, { status: 'Failed', result: (await this.store.get(jobId))?.result ?? null, message });
    }
  }

  private async execute(job: StoredJob): Promise<unknown> {
    const handler = this.handlers.get(job.type);
    if (!handler) throw new ApiError('CORE_INTERNAL', `No handler for job type '${job.type}'`);
    const user = job.createdById ? await this.options.loadUser(job.createdById) : undefined;
    if (job.createdById && !user) throw new ApiError('CORE_FORBIDDEN', 'The user who started the job no longer exists');
    const actor = job.createdByActorId ? await this.options.loadUser(job.createdByActorId) : undefined;
    const ctx: RequestContext = { user, ...(actor && { actor }), ...job.context, variables: {} };
    return handler({
      id: job.id,
      payload: job.payload,
      ctx,
      processed: job.processed,
      partial: job.result,
      checkpoint: (processed, progress, partial) => this.store.checkpoint(job.id, { processed, progress, result: partial }),
      stopping: () => this.isStopping,
    });
  }
}
