import { defineEntity, definePlugin } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';

/**
 * CONTRACT §15 for a one-to-many list written from its one side: `Brand.made` sets the `maker` of
 * the products it adds and clears that of those it removes. A required `maker` may not be left
 * empty, and a read-only `fixed` not changed, from the list any more than by a write of the
 * product: the same 400 on every route, and nothing stored.
 */
const Brand = defineEntity({
  name: 'Brand',
  fields: {
    name: { type: 'varchar', required: true },
    made: { type: 'linkMultiple', entity: 'Product', foreign: 'maker' },
    fixedFor: { type: 'linkMultiple', entity: 'Product', foreign: 'fixed' },
  },
});
const Product = defineEntity({
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true },
    maker: { type: 'link', entity: 'Brand', required: true },
    fixed: { type: 'link', entity: 'Brand', readOnly: true },
  },
});

/** A read-only link is set by the server: a hook fills `fixed` on create. */
const filler = definePlugin({
  name: 'fills fixed',
  setup(api) {
    api.onRecord('beforeCreate', 'Product', ({ data }) => {
      if (data) data.fixedId = data.makerId;
    });
  },
});

type Answer = { status: number; body: any };
const refusal = (res: Answer) => ({ status: res.status, code: res.body.error?.code, message: res.body.error?.message });

describe.each(TEST_DBS)('a one-to-many list written from its one side, required and read-only links, on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Brand, Product], plugins: [filler] });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const update = gen === 'A' ? 'patch' : 'put';
    const setUp = async () => {
      const [brand, other] = [(await t.post('/api/Brand', { name: `B ${gen}` }).expect(200)).body.id, (await t.post('/api/Brand', { name: `O ${gen}` }).expect(200)).body.id];
      const product = (await t.post('/api/Product', { name: 'P', makerId: brand }).expect(200)).body;
      expect(product.fixedId).toBe(brand);
      return { brand, other, product: product.id as string };
    };
    const stored = async (product: string) => {
      const { makerId, fixedId } = (await t.get(`/api/Product/${product}`).expect(200)).body;
      return { makerId, fixedId };
    };

    it('refuses to leave a required link empty from the list, as the product refuses it', async () => {
      const { brand, product } = await setUp();
      const expected = refusal(await t[update](`${base}/Product/${product}`, { makerId: null }));
      expect(expected).toMatchObject({ status: 400, code: 'CORE_VALIDATION_FAILED' });
      const answers = [
        await t.del(`${base}/Brand/${brand}/made?id=${product}`),
        await t.del(`${base}/Brand/${brand}/made`).send({ ids: [product] }),
        await t[update](`${base}/Brand/${brand}`, { madeIds: [] }),
      ];
      for (const res of answers) expect(refusal(res)).toEqual(expected);
      const [item] = (await t.post(`${base}/upsert`, [{ entity: 'Brand', payload: { id: brand, madeIds: [] } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'Failed', message: expected.message });
      expect(await stored(product)).toEqual({ makerId: brand, fixedId: brand });
    });

    it('refuses to change a read-only link from the list, adding or removing, as the product refuses it', async () => {
      const { brand, other, product } = await setUp();
      const expected = refusal(await t[update](`${base}/Product/${product}`, { fixedId: other }));
      expect(expected).toMatchObject({ status: 400, code: 'CORE_READ_ONLY_FIELD' });
      const answers = [
        await t.post(`${base}/Brand/${other}/fixedFor`, { id: product }),
        await t.del(`${base}/Brand/${brand}/fixedFor?id=${product}`),
        await t[update](`${base}/Brand/${other}`, { fixedForIds: [product] }),
      ];
      for (const res of answers) expect(refusal(res)).toEqual(expected);
      const [item] = (await t.post(`${base}/upsert`, [{ entity: 'Brand', payload: { id: other, fixedForIds: [product] } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'Failed', message: expected.message });
      expect(await stored(product)).toEqual({ makerId: brand, fixedId: brand });
    });

    it('still moves a product to another maker through that maker’s list (the required link stays set)', async () => {
      const { other, product } = await setUp();
      await t.post(`${base}/Brand/${other}/made`, { id: product }).expect(200);
      expect((await stored(product)).makerId).toBe(other);
    });
  });
});
