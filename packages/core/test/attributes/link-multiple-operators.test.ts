import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, FLAT, startAttributeApi, unique } from './support';

/**
 * A condition on a linkMultiple attribute with an operator it does not take is 400 naming the
 * attribute's type (it named `multiEnum`, the way its values are stored); the operators it takes
 * still filter.
 */
describe.each(TEST_DBS)('operators on linkMultiple attributes on %s', (kind) => {
  let t: TestApi;
  let code: string;
  let brand: string;
  let product: string;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    code = unique('sellers');
    await createAttribute(t, { code, type: 'linkMultiple', linkEntity: 'Brand' });
    brand = (await t.post('/api/Brand', { name: unique('Seller') }).expect(200)).body.id;
    product = (await t.post('/api/Product', { name: unique('P'), [`${code}Ids`]: [brand] }).set(FLAT).expect(200)).body.id;
  });
  afterAll(() => t.close());

  const where = (type: string, value?: unknown) => encodeURIComponent(JSON.stringify([{ type, attribute: code, isAttribute: true, value }]));

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it.each([
      ['equals', 'an-id'],
      ['notEquals', 'an-id'],
      ['in', ['an-id']],
      ['notIn', ['an-id']],
      ['like', '%a%'],
      ['contains', 'a'],
      ['greaterThan', 'a'],
      ['between', ['a', 'b']],
      ['isTrue', undefined],
      ['today', undefined],
    ])('refuses %s naming the linkMultiple type', async (type, value) => {
      const res = await t.get(`${base}/Product?where=${where(type, value)}`).set(FLAT).expect(400);
      expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_QUERY', message: `Operator '${type}' does not apply to attribute '${code}' (linkMultiple)` });
    });

    it('filters with the operators it takes', async () => {
      for (const [type, value] of [['linkedWith', [brand]], ['isLinked', undefined], ['arrayAnyOf', [brand]]] as const) {
        const res = await t.get(`${base}/Product?where=${where(type, value)}`).set(FLAT).expect(200);
        expect(res.body.list.map((r: { id: string }) => r.id)).toEqual([product]);
      }
    });
  });
});
