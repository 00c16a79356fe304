import { ApiError, defineEntity, definePlugin } from '@entity-records/core';
import type request from 'supertest';
import { GENERATIONS, startTestApi, type Requests, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { userWithRole } from '../../../../test/support/users';

/**
 * CONTRACT §15: a write is judged by the same rules in the same order on every route. A type
 * with before-hooks (core's `Webhook`, `Role`, `User`, plugins' `File`, `Sharing`) is written one
 * record at a time, and a hook may refuse on its own: a refusal of a hook must not answer before
 * the rules of the body as sent (its shape and unknown keys, 400; the edit right of each field it
 * names, 403) on `POST`, `PATCH`/`PUT` and the link routes, as upserts and mass updates judge
 * those before any hook.
 */
const Tag = defineEntity({ name: 'Tag', fields: { name: { type: 'varchar', required: true } } });
const Note = defineEntity({
  name: 'Note',
  fields: {
    title: { type: 'varchar', required: true },
    body: { type: 'text' },
    tag: { type: 'link', entity: 'Tag' },
  },
});

/** Refuses a title with a slash, and a tag it is told is retired, as a plugin's own rules would. */
const noteRules = definePlugin({
  name: 'note-rules',
  setup(api) {
    const check = ({ data }: { data?: Record<string, unknown> }) => {
      if (typeof data?.title === 'string' && data.title.includes('/')) throw new ApiError('CORE_VALIDATION_FAILED', 'title must not contain a slash');
      if (data?.tagId === 'retired') throw new ApiError('CORE_VALIDATION_FAILED', 'tag retired is retired');
    };
    api.onRecord('beforeCreate', 'Note', check);
    api.onRecord('beforeUpdate', 'Note', check);
  },
});

type Answer = [status: number, code: string | undefined, message: string | undefined];
const answer = (res: request.Response): Answer => [res.status, res.body.error?.code, res.body.error?.message];
/** A mass update judges a body before any record, and a record's refusal (a hook's) as an item of `errors`. */
const massAnswer = (res: request.Response): Answer | ['item', string, string] => {
  const [error] = res.body.errors ?? [];
  return res.status === 200 && error ? ['item', error.code, error.message] : answer(res);
};

describe.each(TEST_DBS)('before-hooks after the rules of the body on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Tag, Note], plugins: [noteRules] });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    const upsertPath = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';

    /** The answers of one write of a note by every route: PATCH, PUT, a mass update, an upsert item (its message), and a create of the same body. */
    async function everyRoute(client: Requests, id: string, body: Record<string, unknown>) {
      const routes = [
        answer(await client.patch(`${base}/Note/${id}`, body)),
        answer(await client.put(`${base}/Note/${id}`, body)),
        massAnswer(await client.post(`${base}/entityMassUpdate`, { entityName: 'Note', ids: [id], values: body })),
      ];
      const [item] = (await client.post(upsertPath, [{ entity: 'Note', payload: { id, ...body } }]).expect(200)).body;
      const [created] = (await client.post(upsertPath, [{ entity: 'Note', payload: { title: 'New', ...body } }]).expect(200)).body;
      const create = answer(await client.post(`${base}/Note`, { title: 'New', ...body }));
      return { routes, upsert: [item.status, item.message], create, upsertCreate: [created.status, created.message] };
    }

    it('answers an unknown key before a refusal of a hook, on every route alike', async () => {
      const note = (await t.post(`${base}/Note`, { title: 'First' }).expect(200)).body;
      const seen = await everyRoute(t, note.id, { title: 'a/b', nope: 1 });
      expect(seen.routes).toEqual(Array(3).fill([400, 'CORE_UNKNOWN_FIELD', expect.stringContaining('nope')]));
      expect(seen.upsert).toEqual(['Failed', 'Unknown field for Note: nope']);
      expect(seen.create).toEqual([400, 'CORE_UNKNOWN_FIELD', 'Unknown field for Note: nope']);
      expect(seen.upsertCreate).toEqual(['Failed', 'Unknown field for Note: nope']);
      // A value of the wrong type too.
      const typed = await everyRoute(t, note.id, { title: 'a/b', body: 5 });
      expect(typed.routes.map(([status, code]) => [status, code])).toEqual(Array(3).fill([400, 'CORE_VALIDATION_FAILED']));
      expect(typed.create[2]).toBe(typed.upsert[1]);
      expect(typed.routes[0][2]).toBe(typed.upsert[1]);
      // Alone, the hook's refusal is the answer everywhere.
      const hooked = await everyRoute(t, note.id, { title: 'a/b' });
      const refused = [400, 'CORE_VALIDATION_FAILED', 'title must not contain a slash'];
      expect(hooked.routes).toEqual([refused, refused, ['item', ...refused.slice(1)]]);
      expect(hooked.upsert).toEqual(['Failed', 'title must not contain a slash']);
      expect((await t.get(`${base}/Note/${note.id}`).expect(200)).body).toMatchObject({ title: 'First', modifiedAt: note.modifiedAt });
      // A body the rules take still reaches the hooks: a client's id, a title without a slash.
      expect((await t.post(`${base}/Note`, { id: `chosen-${g}`, title: 'Chosen' }).expect(200)).body).toMatchObject({ id: `chosen-${g}`, title: 'Chosen' });
      await t.patch(`${base}/Note/${note.id}`, { title: 'Second' }).expect(200);
    });

    it('answers a field the role may not edit 403 before a refusal of a hook, the link routes too', async () => {
      const note = (await t.post(`${base}/Note`, { title: 'Locked' }).expect(200)).body;
      const tag = (await t.post(`${base}/Tag`, { name: 'Tag' }).expect(200)).body;
      const locked = await userWithRole(t, {
        scopes: { Note: { create: true, read: 'all', edit: 'all' }, Tag: { read: 'all' } },
        fields: { Note: { title: { edit: false }, tag: { edit: false } } },
      });
      const seen = await everyRoute(locked, note.id, { title: 'a/b' });
      expect(seen.routes).toEqual(Array(3).fill([403, 'CORE_FORBIDDEN', 'Not allowed to edit Note.title']));
      expect(seen.upsert).toEqual(['Failed', 'Not allowed to edit Note.title']);
      expect(seen.create).toEqual([403, 'CORE_FORBIDDEN', 'Not allowed to edit Note.title']);
      expect(seen.upsertCreate).toEqual(['Failed', 'Not allowed to edit Note.title']);
      const forbidden: Answer = [403, 'CORE_FORBIDDEN', 'Not allowed to edit Note.tag'];
      for (const id of ['retired', tag.id]) {
        expect(answer(await locked.patch(`${base}/Note/${note.id}`, { tagId: id }))).toEqual(forbidden);
        expect(answer(await locked.post(`${base}/Note/${note.id}/tag`, { id }))).toEqual(forbidden);
        expect(answer(await locked.post(`${base}/entityMassUpdate`, { entityName: 'Note', ids: [note.id], addLinks: { tag: [id] } }))).toEqual(forbidden);
      }
      expect((await t.get(`${base}/Note/${note.id}`).expect(200)).body).toMatchObject({ title: 'Locked', tagId: null, modifiedAt: note.modifiedAt });
    });
  });
});
