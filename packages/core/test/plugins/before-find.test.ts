import { defineEntity, definePlugin, systemContext } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../../test/support/users';

/**
 * A plugin's own `beforeFind` hook (docs/guide/writing-a-plugin.md, record hooks), without a
 * definition's `access`: the `where` items it pushes narrow every read and write of the caller.
 * Here a user sees only the notes of their team; admins and server-side code see all.
 */

/** The team of each user, as the host knows it. */
const teams = new Map<string, string>();

const teamRule = definePlugin({
  name: 'team-rule',
  setup(api) {
    api.onRecord('beforeFind', 'Note', ({ ctx, where }) => {
      if (!ctx.user?.isAdmin) where?.push({ type: 'equals', attribute: 'team', value: teams.get(ctx.user?.id ?? '') ?? '' });
    });
  },
});

const Note = defineEntity({
  name: 'Note',
  fields: { title: { type: 'varchar', required: true }, code: { type: 'varchar', unique: true }, team: { type: 'varchar' } },
});

const FULL = { create: true, read: 'all', edit: 'all', delete: 'all' };

describe.each(TEST_DBS)("a plugin's beforeFind hook on %s", (kind) => {
  let t: TestApi;
  let red: UserClient;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Note], plugins: [teamRule] });
    red = await userWithRole(t, { scopes: { Note: FULL } });
    teams.set(red.user.id, 'red');
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    let n = 0;
    /** A red and a blue note, new for each test, made by the admin. */
    async function notes() {
      const code = (team: string) => `${kind}-${gen}-${++n}-${team}`;
      const own = (await t.post(`${base}/Note`, { title: 'Red note', code: code('red'), team: 'red' }).expect(200)).body;
      const other = (await t.post(`${base}/Note`, { title: 'Blue note', code: code('blue'), team: 'blue' }).expect(200)).body;
      return { own, other, prefix: `${kind}-${gen}-${n}` };
    }
    const stored = async (id: string) => (await t.get(`${base}/Note/${id}`).expect(200)).body;
    const update = (path: string, body: unknown) => (gen === 'A' ? red.patch(path, body) : red.put(path, body));

    it('narrows lists, totals and single reads to the rows it admits', async () => {
      const { own, other } = await notes();
      const listed = (await red.get(`${base}/Note?maxSize=200`).expect(200)).body;
      expect(listed.list.map((r: { team: string }) => r.team)).toEqual(listed.list.map(() => 'red'));
      expect(listed.list.map((r: { id: string }) => r.id)).toContain(own.id);
      expect(listed.total).toBe(listed.list.length);
      await red.get(`${base}/Note/${own.id}`).expect(200);
      expect((await red.get(`${base}/Note/${other.id}`).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      // The admin, and server-side code, see every team.
      expect((await t.get(`${base}/Note?totalOnly=true`).expect(200)).body.total).toBeGreaterThan(listed.total);
      expect((await t.api.repository('Note').get(systemContext(), other.id)).team).toBe('blue');
    });

    it('keeps writes inside them: other rows are 404, leaving them is 403, nothing changes', async () => {
      const { own, other, prefix } = await notes();
      const before = await stored(other.id);
      await update(`${base}/Note/${other.id}`, { title: 'Taken' }).expect(404);
      await red.del(`${base}/Note/${other.id}`).expect(404);
      expect(await stored(other.id)).toEqual(before);
      const outside = await red.post(`${base}/Note`, { title: 'Smuggled', code: `${prefix}-smuggled`, team: 'blue' }).expect(403);
      expect(outside.body.error.code).toBe('CORE_OUTSIDE_ROW_RULES');
      expect((await update(`${base}/Note/${own.id}`, { team: 'blue' }).expect(403)).body.error.code).toBe('CORE_OUTSIDE_ROW_RULES');
      expect((await stored(own.id)).team).toBe('red');
      await update(`${base}/Note/${own.id}`, { title: 'Renamed' }).expect(200);
      await red.del(`${base}/Note/${own.id}`).expect(200);
    });

    it('keeps upsert items inside them: a row it hides is a collision, a new row outside is refused', async () => {
      const { other, prefix } = await notes();
      const before = await stored(other.id);
      const results = (await red.post(`${base}/upsert`, [
        { entity: 'Note', payload: { code: other.code, title: 'Taken by code' } },
        { entity: 'Note', payload: { id: other.id, title: 'Taken by id' } },
        { entity: 'Note', payload: { code: `${prefix}-new`, title: 'New', team: 'red' } },
        { entity: 'Note', payload: { code: `${prefix}-new-blue`, title: 'New in blue', team: 'blue' } },
      ]).expect(200)).body as { status: string; message?: string }[];
      expect(results.map((r) => r.status)).toEqual(['Failed', 'Failed', 'Created', 'Failed']);
      expect(results[0].message).toBe('Note with the same code already exists');
      expect(results[1].message).toBe('Note with the same id already exists');
      expect(results[3].message).toBe('The Note would be outside the records you may access');
      expect(await stored(other.id)).toEqual(before);
    });
  });
});
