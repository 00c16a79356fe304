import { defineEntity, definePlugin, type ApiRecord, type RecordHookName } from '@entity-records/core';
import request from 'supertest';
import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { userWithRole } from '../../../../test/support/users';

/** Written by clients, never shown: `secret`. Vault has hooks (single-record upserts), Safe none (set-based). */
const Vault = defineEntity({
  name: 'Vault',
  fields: { name: { type: 'varchar', required: true, unique: true }, secret: { type: 'varchar', writeOnly: true } },
});
const Safe = defineEntity({
  name: 'Safe',
  fields: { code: { type: 'varchar', required: true, unique: true }, secret: { type: 'varchar', writeOnly: true } },
});

interface Seen {
  hook: RecordHookName;
  data?: Record<string, unknown>;
  record?: ApiRecord;
}

/** Records what Vault's hooks see, and adds a `_meta` category that reads write-only fields. */
function recorder(seen: Seen[]) {
  return definePlugin({
    name: 'recorder',
    setup(api) {
      api.onRecord('beforeUpdate', 'Vault', ({ data }) => void seen.push({ hook: 'beforeUpdate', data: { ...data } }));
      api.onRecord('afterCreate', 'Vault', ({ record }) => void seen.push({ hook: 'afterCreate', record }));
      api.onRecord('afterUpdate', 'Vault', ({ record }) => void seen.push({ hook: 'afterUpdate', record }));
      api.addMetaCategory('guarded', {
        load: ({ model }) => ['createdByActor', ...(model.field.has('secret') ? ['secret'] : [])],
        provide: ({ records }) => records.map((r) => typeof r.secret === 'string'),
      });
    },
  });
}

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysOf(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      keysOf(v, out);
    }
  }
  return out;
}

const leaks = (body: unknown) => [...keysOf(body)].filter((k) => k === 'secret' || k === 'password' || /ActorId$|ActorName$/.test(k));

describe.each(TEST_DBS)('write-only fields on %s', (kind) => {
  let t: TestApi;
  const seen: Seen[] = [];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Vault, Safe], plugins: [recorder(seen)], auth: { tokenCacheSeconds: 3600 } });
  });
  afterAll(() => t.close());
  beforeEach(() => void seen.splice(0));

  const storedSecret = async (table: string, id: string) => (await t.api.database.knex(table).first('secret').where({ id }))?.secret;

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('writes a write-only value set to null or to what it holds, and hooks see the change', async () => {
      const vault = (await t.post(`${base}/Vault`, { name: `v-null-${gen}`, secret: 's1' }).expect(200)).body;
      expect(await storedSecret('vault', vault.id)).toBe('s1');
      await t.patch(`${base}/Vault/${vault.id}`, { secret: null }).expect(200);
      expect(await storedSecret('vault', vault.id)).toBeNull();
      expect(seen.find((s) => s.hook === 'beforeUpdate')?.data).toEqual({ secret: null });
      await t.put(`${base}/Vault/${vault.id}`, { secret: 's2' }).expect(200);
      expect(await storedSecret('vault', vault.id)).toBe('s2');
    });

    it('clears a user password set to null: the old one no longer signs in', async () => {
      const user = (await t.post(`${base}/User`, { userName: `pw-null-${gen}`, password: 'old-password-1' }).expect(200)).body;
      await request(t.server).get('/api/userSession').auth(`pw-null-${gen}`, 'old-password-1').expect(200);
      await t.patch(`${base}/User/${user.id}`, { password: null }).expect(200);
      await request(t.server).get('/api/userSession').auth(`pw-null-${gen}`, 'old-password-1').expect(401);
    });

    it('refuses a write-only field the role may not edit, whatever the value (403)', async () => {
      const vault = (await t.post(`${base}/Vault`, { name: `v-role-${gen}`, secret: 's1' }).expect(200)).body;
      const user = await userWithRole(t, {
        scopes: { Vault: { create: true, read: 'all', edit: 'all', delete: 'no', stream: false } },
        fields: { Vault: { secret: { read: false, edit: false } } },
      });
      for (const secret of [null, 's1', 'other']) {
        const res = await user.patch(`${base}/Vault/${vault.id}`, { secret }).expect(403);
        expect(res.body.error.code).toBe('CORE_FORBIDDEN');
      }
      expect(await storedSecret('vault', vault.id)).toBe('s1');
    });

    it('gives after-hooks every readable field and nothing write-only, with or without With-Meta', async () => {
      const shapes: string[][] = [];
      for (const withMeta of [false, true]) {
        seen.splice(0);
        const created = (await t.post(`${base}/Vault`, { name: `v-hook-${gen}-${withMeta}`, secret: 'x' }).set('With-Meta', String(withMeta)).expect(200)).body;
        await t.patch(`${base}/Vault/${created.id}`, { name: `v-hook2-${gen}-${withMeta}` }).set('With-Meta', String(withMeta)).expect(200);
        const records = seen.filter((s) => s.record).map((s) => s.record as ApiRecord);
        expect(records.map((r) => r.id)).toEqual([created.id, created.id]);
        for (const r of records) shapes.push(Object.keys(r).sort());
      }
      expect(shapes[0]).toEqual(['createdAt', 'createdById', 'createdByName', 'id', 'modifiedAt', 'modifiedById', 'modifiedByName', 'name']);
      for (const shape of shapes) expect(shape).toEqual(shapes[0]);
    });

    it('never shows a write-only value: answers, lists, upsert and job results, with With-Meta', async () => {
      const meta = { 'With-Meta': 'true' };
      const vault = (await t.post(`${base}/Vault`, { name: `v-leak-${gen}`, secret: 's' }).set(meta).expect(200)).body;
      expect(vault._meta.guarded).toBe(true);
      const bodies: unknown[] = [vault];
      bodies.push((await t.patch(`${base}/Vault/${vault.id}`, { secret: 't' }).set(meta).expect(200)).body);
      bodies.push((await t.get(`${base}/Vault/${vault.id}`).set(meta).expect(200)).body);
      bodies.push((await t.get(`${base}/Vault`).set(meta).expect(200)).body);
      bodies.push((await t.get(`${base}/User`).set(meta).expect(200)).body);
      const items = [
        { entity: 'Vault', payload: { name: `v-leak-${gen}`, secret: 'u' } },
        { entity: 'Vault', payload: { name: `v-new-${gen}`, secret: 'u' } },
        { entity: 'Safe', payload: { code: `s-leak-${gen}`, secret: 'u' } },
        { entity: 'Safe', payload: { code: `s-leak-${gen}`, secret: 'v' } },
        { entity: 'User', payload: { userName: `u-leak-${gen}`, password: 'pw-123456' } },
      ];
      const upserted = (await t.post(`${base}/upsert`, items).set(meta).expect(200)).body;
      expect(upserted.map((r: { status: string }) => r.status)).toEqual(['Updated', 'Created', 'Created', 'Updated', 'Created']);
      bodies.push(upserted);
      const { jobId } = (await t.post(`${base}/upsertAsync`, items).set(meta).expect(200)).body;
      let job: { status: string; result: unknown } = { status: 'Pending', result: null };
      for (let i = 0; i < 100 && !['Success', 'Failed'].includes(job.status); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        job = (await t.get(`${base}/Job/${jobId}`).set(meta).expect(200)).body;
      }
      expect(job.status).toBe('Success');
      bodies.push(job);
      for (const body of bodies) expect(leaks(body)).toEqual([]);
      expect(await storedSecret('safe', upserted[2].entity.id)).toBe('v');
      await request(t.server).get('/api/userSession').auth(`u-leak-${gen}`, 'pw-123456').expect(200);
      await request(t.server).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).expect(200);
    });
  });
});
