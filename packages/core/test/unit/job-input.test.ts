import { JobService } from '../../src/jobs/job-service';
import type { JobQueue } from '../../src/jobs/queue';
import type { JobStore } from '../../src/sql/job-store';

/** A job's input nests no deeper than a body may (CONTRACT §17): a job a plugin or server code starts is held to it too. */
describe('the input of a job', () => {
  const stored: unknown[] = [];
  const sent: string[] = [];
  const store = { insert: async (job: unknown) => void stored.push(job) } as unknown as JobStore;
  const queue: JobQueue = { start: async () => undefined, stop: async () => undefined, send: async (id) => void sent.push(id) };
  const jobs = new JobService(store, queue, { loadUser: async () => undefined, logger: { info: () => undefined, error: () => undefined } });
  jobs.register('work', async () => 'done');

  const nested = (depth: number) => {
    let value: unknown = 1;
    for (let i = 0; i < depth; i++) value = [value];
    return value;
  };

  it('is refused (400 CORE_INVALID_JSON) when it nests deeper than 64 levels under its key, and nothing is stored or queued', async () => {
    await expect(jobs.enqueue('work', { items: nested(65) }, { variables: {} })).rejects.toMatchObject({ code: 'CORE_INVALID_JSON', status: 400, details: { maxDepth: 64 } });
    await expect(jobs.enqueue('work', { items: nested(5000) }, { variables: {} })).rejects.toMatchObject({ code: 'CORE_INVALID_JSON' });
    expect({ stored, sent }).toEqual({ stored: [], sent: [] });
  });

  it('is taken at 64 levels', async () => {
    const id = await jobs.enqueue('work', { items: nested(64) }, { variables: {} });
    expect(sent).toEqual([id]);
    expect(stored).toHaveLength(1);
  });
});
