import { defineEntity, systemContext, type RecordHookEvent } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { finishedJob } from '../../../../test/support/jobs';
import { userWithRole, type UserClient } from '../../../../test/support/users';

jest.setTimeout(180_000);

/** What happens when a record named `stop…` is written: set by a test, run once. */
let onStop: (() => Promise<void>) | undefined;

const stopHook = async ({ record }: RecordHookEvent) => {
  if (!onStop || !String(record?.name).startsWith('stop')) return;
  const run = onStop;
  onStop = undefined;
  await run();
};

/** Its write hooks make every item of a job run one at a time, so the hook fires inside a chunk. */
const Tick = defineEntity({
  name: 'Tick',
  fields: { name: { type: 'varchar', required: true }, note: { type: 'varchar' } },
  hooks: { afterCreate: stopHook, afterUpdate: stopHook },
});

const FULL = { create: true, read: 'all', edit: 'all', delete: 'all', stream: true };

/**
 * A job runs with the rights its user has as it goes, not with those they had when it started: a
 * user deactivated, or whose role is taken away, while their job runs gets nothing more written
 * from the next chunk (upsert, 500 items) or step (mass update, 200 records) on.
 */
describe.each(TEST_DBS)('rights taken away while a job runs, on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Tick] });
  });
  afterAll(() => t.close());

  const users = () => t.api.repository('User');
  const count = async (base: string, where: string) => (await t.get(`${base}/Tick?totalOnly=true&${where}`).expect(200)).body.total as number;
  const startsWith = (prefix: string) => `where[0][type]=startsWith&where[0][attribute]=name&where[0][value]=${prefix}`;
  /** An upsertAsync of 600 ticks by `user`, the sixth of them named `stop`. */
  const upsertJob = async (user: UserClient, base: string, prefix: string) => {
    const items = Array.from({ length: 600 }, (_, i) => ({ entity: 'Tick', payload: { name: i === 5 ? `stop ${prefix}` : `${prefix} ${i}` } }));
    const { jobId } = (await user.post(`${base}/upsertAsync`, items).expect(200)).body;
    return finishedJob(t, { base, id: jobId });
  };

  it.each(GENERATIONS)('an upsert job whose user is deactivated stops after its chunk (generation %s)', async (gen, base) => {
    const user = await userWithRole(t, { scopes: { Tick: FULL } });
    onStop = async () => void (await users().update(systemContext(), user.user.id, { isActive: false }));
    const job = await upsertJob(user, base, `deactivated-${gen}`);
    expect(job).toMatchObject({ status: 'Failed', message: 'The user who started the job is deactivated', created: 500, failed: 0 });
    expect(job.result).toHaveLength(500);
    expect((await count(base, startsWith(`deactivated-${gen}`))) + (await count(base, startsWith(`stop deactivated-${gen}`)))).toBe(500);
  });

  it.each(GENERATIONS)('an upsert job whose user loses their role creates nothing more (generation %s)', async (gen, base) => {
    const user = await userWithRole(t, { scopes: { Tick: FULL } });
    onStop = async () => void (await users().update(systemContext(), user.user.id, { rolesIds: [] }));
    const job = await upsertJob(user, base, `unroled-${gen}`);
    expect(job).toMatchObject({ status: 'Success', created: 500, failed: 100 });
    expect(job.result[599]).toMatchObject({ status: 'Failed', stored: false });
    expect((await count(base, startsWith(`unroled-${gen}`))) + (await count(base, startsWith(`stop unroled-${gen}`)))).toBe(500);
  });

  it.each(GENERATIONS)('a mass update job whose user is deactivated stops after its step (generation %s)', async (gen, base) => {
    const user = await userWithRole(t, { scopes: { Tick: FULL } });
    // Ids in the order the job takes them: the first record it updates is the one that stops it.
    const items = Array.from({ length: 450 }, (_, i) => ({
      entity: 'Tick',
      payload: { id: `mass-${gen}-${String(i).padStart(3, '0')}`, name: i === 0 ? `stop mass-${gen}` : `mass-${gen} ${i}` },
    }));
    expect((await t.post(`${base}/upsert`, items).expect(200)).body.every((r: { status: string }) => r.status === 'Created')).toBe(true);
    onStop = async () => void (await users().update(systemContext(), user.user.id, { isActive: false }));
    const where = [{ type: 'contains', attribute: 'name', value: `mass-${gen}` }];
    const { jobId } = (await user.post(`${base}/entityMassUpdate`, { entityName: 'Tick', where, values: { note: 'after' } }).expect(200)).body;
    const job = await finishedJob(t, { base, id: jobId });
    expect(job).toMatchObject({ status: 'Failed', message: 'The user who started the job is deactivated', result: { updated: 200, errors: [] } });
    expect(await count(base, `where[0][type]=equals&where[0][attribute]=note&where[0][value]=after&where[1][type]=contains&where[1][attribute]=name&where[1][value]=mass-${gen}`)).toBe(200);
  });
});
