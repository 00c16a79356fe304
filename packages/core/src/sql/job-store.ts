import { GENERATIONS, type GenerationName } from '../generations';
import type { EntityModel } from '../definition/normalize';
import type { JobCounts } from '../jobs/job-counts';
import type { JobStatus } from '../jobs/job-entity';
import { nowDateTime } from '../time';
import type { Database } from './database';
import { VERSION_COLUMN } from './schema-sync';

/** What a job keeps of the request that started it (a job stored by an earlier version has none). */
export interface JobContext {
  generation?: GenerationName;
  /** The request sent `Flatten-Attributes: true`: attribute values are fields of its body. */
  flattenAttributes?: boolean;
}

export interface StoredJob {
  id: string;
  type: string;
  status: JobStatus;
  payload: Record<string, unknown>;
  processed: number;
  result: unknown;
  createdById: string | null;
  createdByActorId: string | null;
  context: JobContext;
}

/** The stored context, keeping only what is known and well formed. */
function jobContext(value: unknown): JobContext {
  const { generation, flattenAttributes } = (value ?? {}) as { generation?: unknown; flattenAttributes?: unknown };
  return {
    ...(typeof generation === 'string' && Object.hasOwn(GENERATIONS, generation) && { generation: generation as GenerationName }),
    ...(flattenAttributes === true && { flattenAttributes }),
  };
}

/** A job's counts before it counts anything: 0 each (the fields' default), never NULL. */
const NO_COUNTS: JobCounts = { created: 0, updated: 0, notModified: 0, failed: 0 };
const countColumns = (counts: JobCounts) => ({ created: counts.created, updated: counts.updated, not_modified: counts.notModified, failed: counts.failed });

/** The input an ended job keeps: none (see `JobStore.finish`). */
export const ENDED_PAYLOAD: Readonly<Record<string, never>> = Object.freeze({});

/** The SQL of the job table: rows are the truth; queues only carry job ids. */
export class JobStore {
  constructor(
    private readonly database: Database,
    private readonly model: EntityModel,
  ) {}

  private get table() {
    return this.database.knex(this.model.table);
  }

  private json(value: unknown): unknown {
    return this.database.dialect.toDb('jsonObject', value);
  }

  /**
   * The columns of a change of a job's row, its version one more: a job is a record (CONTRACT
   * §16), and a client polling it with `If-None-Match` must see every change the worker makes.
   */
  private changed(columns: Record<string, unknown>, at = nowDateTime()): Record<string, unknown> {
    const { knex } = this.database;
    return { ...columns, modified_at: at, [VERSION_COLUMN]: knex.raw('?? + 1', [VERSION_COLUMN]) };
  }

  async insert(job: { id: string; type: string; payload: unknown; context: JobContext; userId: string | null; actorId: string | null }): Promise<void> {
    const now = nowDateTime();
    await this.table.insert({
      id: job.id,
      type: job.type,
      status: 'Pending',
      progress: 0,
      processed: 0,
      ...countColumns(NO_COUNTS),
      payload: this.json(job.payload),
      context: this.json(job.context),
      created_at: now,
      modified_at: now,
      created_by_id: job.userId,
      modified_by_id: job.userId,
      created_by_actor_id: job.actorId,
      modified_by_actor_id: job.actorId,
    });
  }

  /**
   * Gives the counters of jobs stored before new jobs started at 0 (NULL there) their value 0, so
   * that reads, filters and updates of those jobs see what the fields declare; their version moves
   * (their answer changed). Run at start-up; a row to repair is one of an earlier version.
   */
  async zeroMissingCounts(): Promise<void> {
    const columns = Object.keys(countColumns(NO_COUNTS));
    const { knex } = this.database;
    const zeroed = Object.fromEntries(columns.map((c) => [c, knex.raw('coalesce(??, 0)', [c])]));
    await this.table
      .update({ ...zeroed, [VERSION_COLUMN]: knex.raw('?? + 1', [VERSION_COLUMN]) })
      .where((q) => {
        for (const c of columns) q.orWhereNull(c);
      });
  }

  async get(id: string): Promise<StoredJob | undefined> {
    const row = await this.table.select('*').where({ id, deleted: this.database.dialect.live }).first();
    if (!row) return undefined;
    const { dialect } = this.database;
    return {
      id: row.id,
      type: row.type,
      status: row.status,
      payload: (dialect.fromDb('jsonObject', row.payload) ?? {}) as Record<string, unknown>,
      processed: Number(row.processed ?? 0),
      result: dialect.fromDb('jsonObject', row.result),
      createdById: row.created_by_id,
      createdByActorId: row.created_by_actor_id ?? null,
      context: jobContext(dialect.fromDb('jsonObject', row.context)),
    };
  }

  /**
   * Marks a pending (or interrupted running) job as running, from now on unless it started
   * before; false when it is finished or canceled.
   */
  async claim(id: string): Promise<boolean> {
    const now = nowDateTime();
    const started = this.database.knex.raw('coalesce(??, ?)', ['started_at', now]);
    const count = await this.table
      .update(this.changed({ status: 'Running', started_at: started }, now))
      .where({ id })
      .whereIn('status', ['Pending', 'Running']);
    return count > 0;
  }

  /** Saves how far a running job got: items done, percent, the partial result and its counts. */
  async checkpoint(id: string, { processed, progress, result, counts }: { processed: number; progress: number; result: unknown; counts: JobCounts }): Promise<void> {
    await this.table.update(this.changed({ processed, progress, result: this.json(result), ...countColumns(counts) })).where({ id, status: 'Running' });
  }

  /**
   * Ends a running job. Its input goes with it (`ENDED_PAYLOAD`): nothing runs it again, and it may
   * hold what no row keeps in clear (a user's password, a webhook's secret).
   */
  async finish(id: string, { status, result, message, counts }: { status: JobStatus; result: unknown; message: string | null; counts: JobCounts }): Promise<void> {
    const now = nowDateTime();
    const ended = { status, result: this.json(result), payload: this.json(ENDED_PAYLOAD), ...countColumns(counts), message, ended_at: now };
    await this.table
      .update(this.changed({ ...ended, ...(status === 'Success' && { progress: 100 }) }, now))
      .where({ id, status: 'Running' });
  }

  /**
   * Removes a job the queue never took (its request failed when handing it over): a row nobody
   * was told of, which no worker would ever run.
   */
  async discard(id: string): Promise<void> {
    await this.table.where({ id, status: 'Pending' }).delete();
  }

  /** The ids of the jobs marked `Running`. */
  async running(): Promise<string[]> {
    const rows = await this.table.select('id').where({ status: 'Running' }).andWhere('deleted', this.database.dialect.live as never).orderBy('id');
    return rows.map((r: { id: string }) => r.id);
  }

  /** Jobs left pending or running, oldest first (for a queue that starts again). */
  async unfinished(): Promise<string[]> {
    const rows = await this.table.select('id').whereIn('status', ['Pending', 'Running']).andWhere('deleted', this.database.dialect.live as never).orderBy('id');
    return rows.map((r: { id: string }) => r.id);
  }
}
