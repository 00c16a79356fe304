import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { UPSERT_PATHS } from './support';

/**
 * A many-to-many link is one table written from either side, each side with its own column order:
 * set-based upserts from both sides in one instance store each pair as sent, and read it back from
 * both records.
 */
describe.each(TEST_DBS)('upserts of a many-to-many link from both sides on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  it.each(UPSERT_PATHS)('stores the pairs of either side as sent (generation %s)', async (g, path, base) => {
    const category = (await t.post(`${base}/Category`, { name: `Side ${g}`, code: `side-${g}` }).expect(200)).body.id;
    const [first, second] = [
      (await t.post(`${base}/Product`, { name: `First ${g}` }).expect(200)).body.id,
      (await t.post(`${base}/Product`, { name: `Second ${g}` }).expect(200)).body.id,
    ];
    // The product side first: its statement is the one kept for the join table.
    const fromProduct = (await t.post(path, [{ entity: 'Product', payload: { id: first, categoriesIds: [category] } }]).expect(200)).body;
    expect(fromProduct[0].status).toBe('Updated');
    // One pair, as the product side wrote: statements of one size are kept by their shape.
    const fromCategory = (await t.post(path, [{ entity: 'Category', payload: { id: category, productsIds: [second] } }]).expect(200)).body;
    expect(fromCategory[0]).toMatchObject({ status: 'Updated', entity: { productsIds: [second] } });
    expect((await t.get(`${base}/Category/${category}`).expect(200)).body.productsIds).toEqual([second]);
    expect((await t.get(`${base}/Product/${second}`).expect(200)).body.categoriesIds).toEqual([category]);
    expect((await t.get(`${base}/Product/${first}`).expect(200)).body.categoriesIds).toEqual([]);
    // The same again changes nothing.
    expect((await t.post(path, [{ entity: 'Category', payload: { id: category, productsIds: [second] } }]).expect(200)).body[0].status).toBe('NotModified');
  });
});
