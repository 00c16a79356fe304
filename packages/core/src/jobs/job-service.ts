import type { ContextUser, RequestContext } from '../context';
import { ApiError } from '../errors';
import type { JobStore, StoredJob } from '../sql/job-store';
import { MAX_JSON_DEPTH, nestsDeeper } from '../util/json-depth';
import { uuidv7 } from '../util/uuid';
import { HELD_LEASE, type JobLease, type JobQueue } from './queue';
import { BootError } from '../errors';
import type { InstanceLogger } from '../logger';
import { jobCounts } from './job-counts';
import { readPayload, storedPayload } from './job-payload';

/** What a job handler gets: its payload, the context of the user who started it, a checkpoint. */
export interface JobRun {
  id: string;
  payload: Record<string, unknown>;
  /** The context of the user who started the job, with their rights as they were last checked. */
  ctx: RequestContext;
  /** Units of work already done (when an interrupted job runs again). */
  processed: number;
  /** The partial result saved with the last checkpoint. */
  partial: unknown;
  /** Saves how far the job got; a job that runs again resumes from there. */
  checkpoint(processed: number, progress: number, partial: unknown): Promise<void>;
  /** True once the process is stopping: a handler throws `JobInterrupted` at its next safe point. */
  stopping(): boolean;
  /**
   * Loads the job's user (and the admin acting for them) again and gives `ctx` their rights as they
   * are now; throws an `ApiError` when one of them was deactivated or removed meanwhile. A long
   * handler calls it between steps, so that rights taken away while the job runs stop its writes
   * at the next step instead of at its end.
   */
  recheckUser(): Promise<void>;
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
  loadUser: (id: string) => Promise<(ContextUser & { isActive?: boolean }) | undefined>;
  /** Jobs queued, started and ended at info; a failed job at error with what it threw. */
  logger: Pick<InstanceLogger, 'info' | 'error'>;
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

  /** A job type of the host's; a type that exists already (`upsert`, `massUpdate`) is a start-up error. */
  define(type: string, handler: JobHandler): void {
    if (typeof type !== 'string' || !/^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/.test(type)) {
      throw new BootError('CORE_CONFIG_INVALID', `job type ${JSON.stringify(type)} must be a letter, then up to 63 letters, digits or _.:-`);
    }
    if (typeof handler !== 'function') throw new BootError('CORE_CONFIG_INVALID', `job type '${type}' needs a handler function`);
    if (this.handlers.has(type)) throw new BootError('CORE_CONFIG_INVALID', `job type '${type}' is defined already`);
    this.register(type, handler);
  }

  /**
   * Records a pending job for the context's user, with the path generation of its request and
   * whether it flattened attributes, and hands it to the queue; answers its id. The job runs with
   * both, so it writes what the same body written synchronously writes.
   */
  async enqueue(type: string, payload: Record<string, unknown>, ctx: RequestContext): Promise<string> {
    if (!this.handlers.has(type)) throw new ApiError('CORE_INTERNAL', `No handler for job type '${type}'`);
    // A payload is a body (or a value made from one) under one key: stored as JSON and read back
    // by handlers, it must nest no deeper than a body may.
    if (nestsDeeper(payload, MAX_JSON_DEPTH + 1)) {
      throw new ApiError('CORE_INVALID_JSON', `A job's input must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`, { details: { maxDepth: MAX_JSON_DEPTH } });
    }
    const id = uuidv7();
    // The path generation changes what a write checks (an Attribute's code), and
    // `Flatten-Attributes: true` makes attribute values fields of the body; the other headers of
    // the request change only what it reads.
    const context = { ...(ctx.generation && { generation: ctx.generation }), ...(ctx.flattenAttributes && { flattenAttributes: true }) };
    await this.store.insert({ id, type, payload: storedPayload(payload), context, userId: ctx.user?.id ?? null, actorId: ctx.actor?.id ?? null });
    try {
      await this.queue.send(id);
    } catch (error) {
      // The request fails and its caller never learns the id: a row left Pending would stay so.
      await this.store.discard(id).catch(() => undefined);
      throw error;
    }
    this.options.logger.info({ jobId: id, type, userId: ctx.user?.id ?? null }, `job ${id} (${type}) queued`);
    return id;
  }

  /**
   * Hands a pending job to the queue again: one deleted before it ran was dropped by the worker
   * that took it up, and is restored pending. Two deliveries of one job run it once (see `run`).
   */
  async requeue(jobId: string): Promise<void> {
    if ((await this.store.get(jobId))?.status === 'Pending') await this.queue.send(jobId);
  }

  /** Connects the queue; a worker also takes jobs (API-only processes only send them). */
  async start(worker = true): Promise<void> {
    await this.store.zeroMissingCounts();
    await this.queue.start(worker ? (jobId, lease) => this.run(jobId, lease) : undefined);
  }

  stop(): Promise<void> {
    this.isStopping = true;
    return this.queue.stop();
  }

  /**
   * Runs one job to its end; a job already finished or canceled is left alone. Its handler is told
   * to stop (`stopping()`) when the process stops or the job's lease is lost.
   */
  async run(jobId: string, lease: JobLease = HELD_LEASE): Promise<void> {
    const job = await this.store.get(jobId);
    if (!job || !(await this.store.claim(jobId))) return;
    const { logger } = this.options;
    const started = Date.now();
    logger.info({ jobId, type: job.type }, `job ${jobId} (${job.type}) started`);
    try {
      const result = await this.execute(job, lease);
      const counts = jobCounts(result);
      await this.store.finish(jobId, { status: 'Success', result, message: null, counts });
      logger.info({ jobId, type: job.type, status: 'Success', ms: Date.now() - started, ...counts }, `job ${jobId} (${job.type}) succeeded`);
    } catch (error) {
      // Left Running: the queue hands it out again (pg-boss retries; the in-process queue resumes it on start).
      if (error instanceof JobInterrupted) {
        logger.info({ jobId, type: job.type }, `job ${jobId} (${job.type}) interrupted: it runs again from its last checkpoint`);
        throw error;
      }
      logger.error({ jobId, type: job.type, err: error instanceof Error ? error : new Error(String(error)) }, `job ${jobId} (${job.type}) failed`);
      const message = error instanceof ApiError ? error.message : 'The job failed';
      const result = (await this.store.get(jobId))?.result ?? null;
      await this.store.finish(jobId, { status: 'Failed', result, message, counts: jobCounts(result) });
    }
  }

  private async execute(job: StoredJob, lease: JobLease): Promise<unknown> {
    const handler = this.handlers.get(job.type);
    if (!handler) throw new ApiError('CORE_INTERNAL', `No handler for job type '${job.type}'`);
    const run: JobRun = {
      id: job.id,
      payload: readPayload(job.payload),
      ctx: await this.contextOf(job),
      processed: job.processed,
      partial: job.result,
      checkpoint: (processed, progress, partial) => this.store.checkpoint(job.id, { processed, progress, result: partial, counts: jobCounts(partial) }),
      stopping: () => this.isStopping || lease.lost(),
      // A new context, not the old one changed: rights and row rules are resolved once per context.
      recheckUser: async () => {
        run.ctx = await this.contextOf(job);
      },
    };
    return handler(run);
  }

  /**
   * The context a job runs in: its user (and the admin who acted for them) as they are now, with
   * the generation and attribute format of the request that started it. A user or admin who was
   * deactivated or removed since is an `ApiError`: the job writes nothing more for them.
   */
  private async contextOf(job: StoredJob): Promise<RequestContext> {
    const user = job.createdById ? await this.options.loadUser(job.createdById) : undefined;
    if (job.createdById && !user) throw new ApiError('CORE_FORBIDDEN', 'The user who started the job no longer exists');
    // A deactivated user's tokens are revoked: the work they queued does not write for them either.
    if (user?.isActive === false) throw new ApiError('CORE_FORBIDDEN', 'The user who started the job is deactivated');
    const actor = job.createdByActorId ? await this.options.loadUser(job.createdByActorId) : undefined;
    // Without its admin, a delegated job could not record who acted: it writes nothing, as a direct write could not.
    if (job.createdByActorId && !actor) throw new ApiError('CORE_FORBIDDEN', 'The user who acted for the user who started the job no longer exists');
    if (actor?.isActive === false) throw new ApiError('CORE_FORBIDDEN', 'The user who acted for the user who started the job is deactivated');
    return { user, ...(actor && { actor }), ...job.context, variables: {} };
  }
}
