import { defineEntity } from '../definition/define-entity';

export const JOB_STATUSES = ['Pending', 'Running', 'Success', 'Failed', 'Canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Background work (`upsertAsync`, large `entityMassUpdate`). Written by the job runner; clients
 * read it and may set `status` to `Canceled` while it is `Pending`.
 */
export const JobEntity = defineEntity({
  name: 'Job',
  serverCreated: true,
  fields: {
    type: { type: 'varchar', readOnly: true },
    status: { type: 'enum', options: JOB_STATUSES, default: 'Pending' },
    progress: { type: 'int', readOnly: true, default: 0 },
    result: { type: 'jsonObject', readOnly: true, description: 'When done: the per-item results (an array for upserts).' },
    message: { type: 'text', readOnly: true },
    created: { type: 'int', readOnly: true, default: 0, description: 'Items created so far (upserts).' },
    updated: { type: 'int', readOnly: true, default: 0, description: 'Items updated so far.' },
    notModified: { type: 'int', readOnly: true, default: 0, description: 'Items found unchanged so far (upserts).' },
    failed: { type: 'int', readOnly: true, default: 0, description: 'Items that failed so far; GET /Job/{id}/result?status=Failed lists them.' },
    startedAt: { type: 'datetime', readOnly: true },
    endedAt: { type: 'datetime', readOnly: true },
    payload: { type: 'jsonObject', readOnly: true, writeOnly: true },
    context: { type: 'jsonObject', readOnly: true, writeOnly: true, description: 'What the job keeps of the request that started it: its path generation and whether it flattened attributes.' },
    processed: { type: 'int', readOnly: true, writeOnly: true, default: 0 },
  },
});
