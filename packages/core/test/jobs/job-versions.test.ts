import { ApiError, systemContext } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

/** A point a job waits at until the test opens it, and a point the test waits at until the job reaches it. */
function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** The steps of one held job: it says when it runs and when it checkpointed; it goes on when told. */
function heldJob() {
  return { running: gate(), goOn: gate(), checkpointed: gate(), finish: gate() };
}

/**
 * A job is a record (CONTRACT §16): its version moves with every change of its row, the worker's
 * too (claimed, checkpoints, its end) and a cancel, so a client polling with `If-None-Match`
 * sees the job change and finish.
 */
describe.each(TEST_DBS)('job versions on %s', (kind) => {
  let t: TestApi;
  const held = new Map<string, ReturnType<typeof heldJob>>();

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, jobs: { expireInSeconds: 30 } });
    // A host job that stops where the test says: once running, and after a checkpoint.
    t.api.jobs.define('held', async (run) => {
      const steps = held.get(run.payload.key as string) as ReturnType<typeof heldJob>;
      steps.running.open();
      await steps.goOn.opened;
      await run.checkpoint(1, 50, [{ status: 'Created' }]);
      steps.checkpointed.open();
      await steps.finish.opened;
      if (run.payload.fail) throw new ApiError('CORE_CONFLICT', 'the held job fails');
      return [{ status: 'Created' }, { status: 'Updated' }];
    });
  });
  // A test that failed half-way leaves no job holding the queue.
  afterEach(() => {
    for (const steps of held.values()) for (const g of Object.values(steps)) g.open();
  });
  afterAll(() => t.close());

  /** Starts a held job; answers its id and its steps. */
  const startHeld = async (key: string, payload: Record<string, unknown> = {}) => {
    const steps = heldJob();
    held.set(key, steps);
    const id = await t.api.jobs.start('held', { key, ...payload }, systemContext());
    return { id, steps };
  };

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    const read = (id: string, ifNoneMatch?: string) => {
      const req = t.get(`${base}/Job/${id}`);
      return ifNoneMatch === undefined ? req.expect(200) : req.set('If-None-Match', ifNoneMatch);
    };

    it.each(['Success', 'Failed'])('moves when a worker claims the job, at each checkpoint and at its end (%s)', async (status) => {
      const { id, steps } = await startHeld(`steps-${g}-${status}`, { fail: status === 'Failed' });
      await steps.running.opened;
      const running = await read(id);
      expect(running.body).toMatchObject({ status: 'Running', progress: 0 });
      const runningTag = running.headers.etag as string;
      // Created at version 1, Pending: Running is another version.
      expect(runningTag).not.toBe('"1"');
      expect((await read(id, '"1"')).status).toBe(200);
      expect((await read(id, runningTag)).status).toBe(304);

      steps.goOn.open();
      await steps.checkpointed.opened;
      const checkpoint = await read(id, runningTag);
      expect(checkpoint.status).toBe(200);
      expect(checkpoint.body).toMatchObject({ status: 'Running', progress: 50, created: 1 });
      const checkpointTag = checkpoint.headers.etag as string;
      expect(checkpointTag).not.toBe(runningTag);
      expect((await read(id, checkpointTag)).status).toBe(304);

      steps.finish.open();
      expect((await finishedJob(t, { base, id })).status).toBe(status);
      const ended = await read(id, checkpointTag);
      expect(ended.status).toBe(200);
      expect(ended.body).toMatchObject({ status, endedAt: expect.any(String) });
      expect(ended.headers.etag).not.toBe(checkpointTag);
      expect((await read(id, ended.headers.etag as string)).status).toBe(304);
    });

    it('moves for upsertAsync, a mass update job and a cancel: a client polling with If-None-Match sees each end', async () => {
      // Jobs run one at a time per worker: the held one keeps the others Pending until it ends.
      const blocker = await startHeld(`blocker-${g}`);
      await blocker.steps.running.opened;
      const tag = `JV-${g}`;
      const items = Array.from({ length: 300 }, (_, i) => ({ entity: 'Product', payload: { sku: `${tag}-${i}`, name: `n${i}` } }));
      const upsert = (await t.post(`${base}/upsertAsync`, items).expect(200)).body.jobId as string;
      const mass = (await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: [{ type: 'startsWith', attribute: 'sku', value: tag }], values: { quantity: 3 } }).expect(200)).body.jobId as string;
      const canceled = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `never ${g}` } }]).expect(200)).body.jobId as string;
      const pending = new Map<string, string>();
      for (const id of [upsert, mass, canceled]) {
        const res = await read(id);
        expect(res.body).toMatchObject({ status: 'Pending', progress: 0 });
        pending.set(id, res.headers.etag as string);
        expect((await read(id, res.headers.etag as string)).status).toBe(304);
      }

      const cancel = await t.patch(`${base}/Job/${canceled}`, { status: 'Canceled' }).expect(200);
      expect(cancel.body.status).toBe('Canceled');
      const canceledTag = cancel.headers.etag as string;
      expect(canceledTag).not.toBe(pending.get(canceled));
      expect((await read(canceled, pending.get(canceled))).body.status).toBe('Canceled');
      expect((await read(canceled, canceledTag)).status).toBe(304);

      blocker.steps.goOn.open();
      blocker.steps.finish.open();
      // A job sent last ends after the others: by then the worker has passed the canceled one.
      const last = (await t.post(`${base}/upsertAsync`, [{ entity: 'Brand', payload: { name: `last ${g}` } }]).expect(200)).body.jobId as string;
      await finishedJob(t, { base, id: last });

      const upserted = await read(upsert, pending.get(upsert));
      expect(upserted.status).toBe(200);
      expect(upserted.body).toMatchObject({ status: 'Success', progress: 100, created: 300 });
      expect(upserted.headers.etag).not.toBe(pending.get(upsert));
      expect((await read(upsert, upserted.headers.etag as string)).status).toBe(304);

      const massed = await read(mass, pending.get(mass));
      expect(massed.status).toBe(200);
      expect(massed.body).toMatchObject({ status: 'Success', progress: 100, result: { updated: 300, errors: [] } });
      expect(massed.headers.etag).not.toBe(pending.get(mass));
      expect((await read(mass, massed.headers.etag as string)).status).toBe(304);

      // The worker skipped the canceled job and changed nothing of it.
      expect((await read(canceled, canceledTag)).status).toBe(304);
    });
  });
});
