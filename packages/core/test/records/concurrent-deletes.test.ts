import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/** Deletes of one record sent at once answer as if sent one after the other: one deletes it, the others find nothing (404). */
describe.each(TEST_DBS)('concurrent deletes on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, poolSize: 20 });
  });
  afterAll(() => t.close());

  const deletesLogged = async (id: string) => (await t.api.database.knex('record_change').where({ record_id: id, action: 'Delete' })).length;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it.each([
      ['soft, with If-Match', { ifMatch: true, permanently: false }],
      ['soft', { ifMatch: false, permanently: false }],
      ['permanent, with If-Match', { ifMatch: true, permanently: true }],
      ['permanent', { ifMatch: false, permanently: true }],
    ])('20 deletes (%s) of one record: one answers true, the others 404, one Delete logged', async (_what, { ifMatch, permanently }) => {
      for (let round = 0; round < 3; round++) {
        const created = await t.post(`${base}/Product`, { name: 'Deleted at once' }).expect(200);
        const id = created.body.id as string;
        const send = () => {
          const test = t.del(`${base}/Product/${id}`);
          if (ifMatch) test.set('If-Match', created.headers.etag as string);
          return permanently ? test.set('permanently', 'true') : test;
        };
        const answers = await Promise.all(Array.from({ length: 20 }, send));
        expect(answers.filter((r) => r.status === 200).map((r) => r.body)).toEqual([true]);
        expect(answers.filter((r) => r.status !== 200).map((r) => [r.status, r.body.error.code])).toEqual(Array.from({ length: 19 }, () => [404, 'CORE_NOT_FOUND']));
        expect(await deletesLogged(id)).toBe(1);
      }
    });

    it('a delete with If-Match of a record updated meanwhile is 412, also when permanent', async () => {
      for (const permanently of [false, true]) {
        const created = await t.post(`${base}/Product`, { name: 'Updated first' }).expect(200);
        const id = created.body.id as string;
        await t.patch(`/api/Product/${id}`, { price: 3 }).expect(200);
        const test = t.del(`${base}/Product/${id}`).set('If-Match', created.headers.etag as string);
        await (permanently ? test.set('permanently', 'true') : test).expect(412);
        await t.get(`/api/Product/${id}`).expect(200);
      }
    });
  });
});
