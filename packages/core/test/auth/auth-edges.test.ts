import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';

/** Sign-in and permission inputs at the edges: a clear 4xx, never a 500 or a leak. */
describe.each(TEST_DBS)('authentication at the edges on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  const SIGN_IN = [
    ['A', '/api/userSession'],
    ['B', '/api/v1/App/user'],
  ];

  it.each(SIGN_IN)('generation %s: a very long or NUL-holding user name is a wrong sign-in (401), by Basic and by cookie', async (_g, path) => {
    for (const userName of ['x'.repeat(330), 'ad\u0000min']) {
      const basic = await request(t.server).get(path).auth(userName, 'bad').expect(401);
      expect(basic.body.error).toEqual({ code: 'CORE_UNAUTHORIZED', message: 'Wrong user name or password', details: {} });
    }
    await request(t.server).post(`${path}/cookie`).send({ userName: 'x'.repeat(330), password: 'bad' }).expect(401);
  });

  it.each(SIGN_IN)('generation %s: takes a malformed session cookie for no cookie: 401, and Basic sign-in still works', async (_g, path) => {
    const bad = 'er_session=%ZZ';
    for (const [, base] of GENERATIONS) await request(t.server).get(`${base}/Brand`).set('Cookie', bad).expect(401);
    await request(t.server).get(path).set('Cookie', bad).auth('admin', 'admin-test-password').set('Authorization-Token-Only', 'TRUE').expect(200);
    await request(t.server).delete(`${path}/cookie`).set('Cookie', bad).expect(200);
  });

  it.each(SIGN_IN)('generation %s: answers the token alone for Authorization-Token-Only true in any case, or 1', async (_g, path) => {
    for (const value of ['true', 'TRUE', '1']) {
      const res = await request(t.server).get(path).auth('admin', 'admin-test-password').set('Authorization-Token-Only', value).expect(200);
      expect(Object.keys(res.body)).toEqual(['authorizationToken']);
    }
  });

  it('refuses the linked records of a link field the role may not read (403), on every linked route', async () => {
    const brand = (await t.post('/api/Brand', { name: 'Hidden link brand' }).expect(200)).body.id;
    const category = (await t.post('/api/Category', { name: 'Hidden link category', code: 'hlc' }).expect(200)).body.id;
    const product = (await t.post('/api/Product', { name: 'Hidden links', brandId: brand, categoriesIds: [category] }).expect(200)).body.id;
    const reader = await userWithRole(t, {
      scopes: { Product: { read: 'all' }, Brand: { read: 'all' }, Category: { read: 'all' } },
      fields: { Product: { brand: { read: false }, categories: { read: false } }, Brand: { products: { read: false } } },
    });
    const refused = [
      `/api/v1/Product/${product}/brand`,
      `/api/v1/Product/${product}/categories`,
      `/api/entityRelation?entityName=Product&id=${product}&link=brand`,
      `/api/v1/entityRelation?entityName=Product&id=${product}&link=categories`,
      `/api/v1/Brand/${brand}/products`,
      // The other side of a hidden link is hidden too: the same relation.
      `/api/v1/Category/${category}/products`,
    ];
    for (const path of refused) {
      const res = await reader.get(path).expect(403);
      expect(res.body.error.code).toBe('CORE_FORBIDDEN');
    }
    // A readable link still lists: the category's parent.
    await reader.get(`/api/v1/Category/${category}/parent`).expect(200);
    // The metadata names no unreadable field, neither as a field nor in a unique index.
    const meta = (await reader.get('/api/metadata').expect(200)).body.entityDefs.Product;
    expect(meta.fields.brand).toBeUndefined();
    expect(meta.uniqueIndexes).toEqual({});
    expect((await t.get('/api/metadata').expect(200)).body.entityDefs.Product.uniqueIndexes).toEqual({ brand_mpn: ['brand', 'mpn'] });
  });
});
