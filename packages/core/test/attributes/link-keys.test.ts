import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, FLAT, startAttributeApi, unique } from './support';

/**
 * A single-link attribute named twice in one body (`maker` and `makerId`) is refused on every
 * write route, as a link field is (`brand` and `brandId`): which key won depended on their order.
 */
describe.each(TEST_DBS)('a link attribute named by both of its keys on %s', (kind) => {
  let t: TestApi;
  let code: string;
  let brands: string[];
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    code = unique('maker');
    await createAttribute(t, { code, type: 'link', linkEntity: 'Brand' });
    brands = [];
    for (const name of ['First', 'Second']) brands.push((await t.post('/api/Brand', { name: unique(name) }).expect(200)).body.id);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    const upsertPath = base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';

    it.each([
      ['null first', () => ({ [code]: null, [`${code}Id`]: brands[1] })],
      ['the id first', () => ({ [`${code}Id`]: brands[1], [code]: null })],
    ])('refuses both keys (%s) and writes nothing', async (_name, bodyOf) => {
      const body = bodyOf();
      const product = (await t.post(`${base}/Product`, { name: unique('P'), [`${code}Id`]: brands[0] }).set(FLAT).expect(200)).body.id as string;
      const message = `Invalid attribute values: ${code} send either ${code} or ${code}Id, not both`;
      for (const send of [
        () => t.patch(`${base}/Product/${product}`).set(FLAT).send(body),
        () => t.put(`${base}/Product/${product}`).set(FLAT).send(body),
        () => t.post(`${base}/Product`, { name: unique('P'), ...body }).set(FLAT),
        () => t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [product], values: body }).set(FLAT),
      ]) {
        const res = await send().expect(400);
        expect(res.body.error).toMatchObject({ code: 'CORE_VALIDATION_FAILED', message });
      }
      const upsert = await t.post(upsertPath, [{ entity: 'Product', payload: { id: product, ...body } }]).set(FLAT).expect(200);
      expect(upsert.body).toEqual([{ status: 'Failed', stored: false, message }]);
      expect((await t.get(`/api/Product/${product}`).set(FLAT).expect(200)).body[`${code}Id`]).toBe(brands[0]);
    });
  });

  it('refuses what is wrong inside a link object of an attribute in a mass update with the 400 of PATCH, before it starts', async () => {
    const product = (await t.post('/api/Product', { name: unique('P'), [`${code}Id`]: brands[0] }).set(FLAT).expect(200)).body.id as string;
    const brandCount = async () => (await t.get('/api/Brand?totalOnly=true').expect(200)).body.total as number;
    const before = await brandCount();
    for (const object of [{}, { name: 'B', nope: 1 }, { name: 'B', products: [] }, { name: 5 }]) {
      const patched = (await t.patch(`/api/Product/${product}`).set(FLAT).send({ [code]: object }).expect(400)).body.error;
      for (const select of [{ ids: [product] }, { where: [{ type: 'equals', attribute: 'id', value: product }] }]) {
        const mass = (await t.post('/api/entityMassUpdate', { entityName: 'Product', ...select, values: { [code]: object } }).set(FLAT).expect(400)).body.error;
        expect(mass).toMatchObject({ code: patched.code, message: patched.message });
        expect(mass.details.issues).toEqual(patched.details.issues.map((issue: { path: unknown[] }) => ({ ...issue, path: ['values', ...issue.path] })));
      }
    }
    expect(await brandCount()).toBe(before);
  });
});
