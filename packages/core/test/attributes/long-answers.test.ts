import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { FLAT, startAttributeApi, unique } from './support';

/**
 * A body naming thousands of unknown attributes gets a short answer: its message names the first
 * twenty and counts the rest (details.issues lists a hundred), on the endpoints and in flattened
 * writes alike, and an upsert item fails with the same short message. The message grew with the
 * body (5,000 ids: 200 kB; in an upsert, per item).
 */
describe.each(TEST_DBS)('answers to many unknown attributes on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
  });
  afterAll(() => t.close());

  const names = Array.from({ length: 5000 }, (_, i) => `missing${i}`);
  const expectShort = (error: { code: string; message: string; details: { issues: unknown[] } }, prefix: string) => {
    expect(error.code).toBe('CORE_VALIDATION_FAILED');
    expect(error.message.startsWith(prefix)).toBe(true);
    expect(error.message).toContain('missing19');
    expect(error.message).not.toContain('missing20');
    expect(error.message.endsWith('; and 4980 more')).toBe(true);
    expect(error.message.length).toBeLessThan(2000);
    expect(error.details.issues).toHaveLength(100);
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('names twenty unknown attributes and counts the rest, on every route', async () => {
      const product = (await t.post(`${base}/Product`, { name: unique('P') }).expect(200)).body.id as string;
      const added = await t.post(`${base}/Product/${product}/addAttributes`, { attributeIds: names }).expect(400);
      expectShort(added.body.error, 'Unknown attributes: ');
      const upserted = await t.post(`${base}/Product/${product}/upsertAttributeValues`, names.map((attributeId) => ({ attributeId, value: 1 }))).expect(400);
      expectShort(upserted.body.error, 'Unknown attributes: ');

      const patched = await t.patch(`${base}/Product/${product}`, { __attributes: names }).set(FLAT).expect(400);
      expectShort(patched.body.error, 'Invalid attribute values: ');
      const upsertPath = base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
      const items = await t.post(upsertPath, [{ entity: 'Product', payload: { id: product, __attributes: names } }]).set(FLAT).expect(200);
      expect(items.body).toEqual([{ status: 'Failed', stored: false, message: patched.body.error.message }]);
    });
  });
});
