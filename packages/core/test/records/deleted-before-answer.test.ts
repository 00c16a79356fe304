import { definePlugin, type PluginApi } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/**
 * A record deleted by another request between a write's commit and the read of its answer, on
 * cue: a category that a link object creates gets its after-hook once the write is committed,
 * before the answer is read, and this one deletes the product named by the category's code (as a
 * delete sent at that moment would).
 */
function deleterOnCue(): ReturnType<typeof definePlugin> {
  let app: PluginApi;
  return definePlugin({
    name: 'deleter-on-cue',
    setup(api) {
      app = api;
      api.onRecord('afterCreate', 'Category', async ({ ctx, record }) => {
        const code = String(record?.code);
        if (code.startsWith('delete-')) await app.repository('Product').delete(ctx, code.slice('delete-'.length));
      });
    },
  });
}

describe.each(TEST_DBS)('a record deleted before its write is answered on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, plugins: [deleterOnCue()] });
  });
  afterAll(() => t.close());

  let serial = 0;
  // A deleted record has no stream to read: its changes as stored, oldest first.
  const actionsLogged = async (id: string) => (await t.api.database.knex('record_change').where({ record_id: id }).orderBy('seq')).map((c: { action: string }) => c.action);

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('an update answers 404 CORE_NOT_FOUND (it answered 500): the update and the delete are both logged', async () => {
      const id = (await t.post(`${base}/Product`, { name: 'Deleted meanwhile' }).expect(200)).body.id as string;
      const answer = await t.patch(`${base}/Product/${id}`, { price: 5, categories: [{ name: 'Cue', code: `delete-${id}` }] });
      expect([answer.status, answer.body.error?.code]).toEqual([404, 'CORE_NOT_FOUND']);
      await t.get(`${base}/Product/${id}`).expect(404);
      expect(await actionsLogged(id)).toEqual(['Create', 'Update', 'Delete']);
    });

    it('a create answers 404 CORE_NOT_FOUND (it answered 500): the create and the delete are both logged', async () => {
      const id = `gone-${kind}-${(serial += 1)}-${base.length}`;
      const answer = await t.post(`${base}/Product`, { id, name: 'Deleted at once', categories: [{ name: 'Cue', code: `delete-${id}` }] });
      expect([answer.status, answer.body.error?.code]).toEqual([404, 'CORE_NOT_FOUND']);
      await t.get(`${base}/Product/${id}`).expect(404);
      expect(await actionsLogged(id)).toEqual(['Create', 'Delete']);
    });
  });
});
