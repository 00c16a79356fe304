import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('linked records on %s', (kind) => {
  let t: TestApi;
  let brand: { id: string };
  let product: { id: string };
  const ids = (body: { list: { id: string }[] }) => body.list.map((r) => r.id);
  const both = (entity: string, id: string, link: string, query = '') => [
    `/api/entityRelation?entityName=${entity}&id=${id}&link=${link}${query && `&${query}`}`,
    `/api/v1/${entity}/${id}/${link}${query && `?${query}`}`,
    `/api/v1/entityRelation?entityName=${entity}&id=${id}&link=${link}${query && `&${query}`}`,
  ];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    brand = (await t.post('/api/Brand', { name: 'Linked' }).expect(200)).body;
    const cats = [];
    for (const code of ['a', 'b', 'c']) cats.push((await t.post('/api/Category', { name: `Cat ${code}`, code }).expect(200)).body.id);
    product = (await t.post('/api/Product', { name: 'Zed', brandId: brand.id, categoriesIds: cats.slice(0, 2), price: 5 }).expect(200)).body;
    for (const name of ['Alpha', 'Beta']) await t.post('/api/Product', { name, brandId: brand.id, price: name.length }).expect(200);
    await t.post('/api/Product', { name: 'Other' }).expect(200);
  });
  afterAll(() => t.close());

  it('lists has-many links with list parameters in both forms', async () => {
    for (const path of both('Brand', brand.id, 'products', 'sortBy=name&select=name')) {
      const res = await t.get(path).expect(200);
      expect(res.body.total).toBe(3);
      expect(res.body.list.map((r: { name: string }) => r.name)).toEqual(['Alpha', 'Beta', 'Zed']);
      expect(Object.keys(res.body.list[0]).sort()).toEqual(['id', 'name']);
    }
    const filtered = await t.get(both('Brand', brand.id, 'products', 'sortBy=name&where[0][type]=greaterThan&where[0][attribute]=price&where[0][value]=4.5')[1]).expect(200);
    expect(filtered.body.list.map((r: { name: string }) => r.name)).toEqual(['Alpha', 'Zed']);
    const page = await t.get(both('Brand', brand.id, 'products', 'sortBy=name&maxSize=1&offset=1')[0]).expect(200);
    expect(page.body).toMatchObject({ total: 3, list: [expect.objectContaining({ name: 'Beta' })] });
  });

  it('lists many-to-many and single links', async () => {
    for (const path of both('Product', product.id, 'categories')) {
      const res = await t.get(path).expect(200);
      expect(res.body.total).toBe(2);
      expect(res.body.list.map((r: { code: string }) => r.code).sort()).toEqual(['a', 'b']);
    }
    for (const path of both('Product', product.id, 'brand')) expect(ids((await t.get(path).expect(200)).body)).toEqual([brand.id]);
  });

  it("lists the system's links that metadata names (createdBy, modifiedBy), with the reader's rights on User", async () => {
    const admin = (await t.get('/api/v1/App/user').expect(200)).body.user.id;
    const links = (await t.get('/api/metadata').expect(200)).body.entityDefs.Product.links;
    expect(links).toHaveProperty('createdBy');
    for (const link of ['createdBy', 'modifiedBy']) {
      for (const path of both('Product', product.id, link)) expect(ids((await t.get(path).expect(200)).body)).toEqual([admin]);
    }
    // Written by the system only: no link route changes them.
    await t.post(`/api/v1/Product/${product.id}/createdBy`, { id: admin }).expect(404);
  });

  it('answers 404 for an unknown record, entity or link and 400 for missing parameters', async () => {
    await t.get('/api/v1/Product/nope/categories').expect(404);
    await t.get(`/api/v1/Product/${product.id}/nothing`).expect(404);
    await t.get(`/api/v1/Product/${product.id}/name`).expect(404);
    await t.get(`/api/v1/Nope/${product.id}/categories`).expect(404);
    await t.get(`/api/entityRelation?entityName=Product&id=${product.id}`).expect(400);
  });
});
