import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/**
 * A body with a number beyond a double's range (`1e400`) is another body than one with null in its
 * place (CONTRACT §16 idempotency): both parse to values JSON writes alike (Infinity is written as
 * null), and the repeat of one under the same `Idempotency-Key` got the answer of the other.
 */
describe.each(TEST_DBS)('Idempotency-Key and numbers JSON cannot hold on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  let keys = 0;
  const postText = (path: string, { key, text }: { key: string; text: string }) =>
    request(t.server).post(path).set('Authorization-Token', t.token).set('Idempotency-Key', key).set('Content-Type', 'application/json').send(text);

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('answers 422 to a repeat whose body has null where the first had 1e400, and the other way round', async () => {
      const name = `Numbers ${kind} ${base}`;
      const refusedFirst = `refused-${kind}-${base}-${(keys += 1)}`;
      const refused = await postText(`${base}/Product`, { key: refusedFirst, text: `{"name": "${name}", "price": 1e400}` }).expect(400);
      expect(refused.body.error.message).toBe('Invalid Product: price must be a finite number');
      const valid = await postText(`${base}/Product`, { key: refusedFirst, text: `{"name": "${name}", "price": null}` }).expect(422);
      expect(valid.body.error.code).toBe('CORE_IDEMPOTENCY_MISMATCH');

      const storedFirst = `stored-${kind}-${base}-${(keys += 1)}`;
      const created = await postText(`${base}/Product`, { key: storedFirst, text: `{"name": "${name}", "price": null}` }).expect(200);
      const repeat = await postText(`${base}/Product`, { key: storedFirst, text: `{"name": "${name}", "price": -1e400}` }).expect(422);
      expect([repeat.headers['idempotent-replayed'], repeat.body.error.code]).toEqual([undefined, 'CORE_IDEMPOTENCY_MISMATCH']);
      // The same text again is the same request: replayed.
      const again = await postText(`${base}/Product`, { key: storedFirst, text: `{"price": null, "name": "${name}"}` }).expect(200);
      expect([again.headers['idempotent-replayed'], again.body.id]).toEqual(['true', created.body.id]);
    });
  });
});
