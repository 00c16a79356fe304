import request from 'supertest';
import { startTestApi, type TestApi } from '../support/api';
import { TEST_DBS } from '../support/databases';
import { testEntities } from '../support/fixtures';

describe.each(TEST_DBS)('regressions on %s', (kind) => {
  let t: TestApi;
  let brandId: string;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    brandId = (await t.post('/api/Brand', { name: 'Regression brand' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  it('upsert: a later item taking a unique key of a record created earlier in the batch fails, as one at a time', async () => {
    const res = await t.post('/api/upsert', [
      { entity: 'Product', payload: { sku: 'R-A', name: 'n' } },
      { entity: 'Product', payload: { name: 'Chair', brandId, mpn: 'R-M1' } },
      { entity: 'Product', payload: { sku: 'R-A', brandId, mpn: 'R-M1' } },
    ]).expect(200);
    expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Created', 'Failed']);
    expect(res.body[2].message).toMatch(/already exists/);
    expect(res.body[0].entity.id).not.toBe(res.body[1].entity.id);
  });

  it('upsert: a collision with a stored record fails only the colliding item', async () => {
    await t.post('/api/Product', { sku: 'R-A2', name: 'a2' }).expect(200);
    await t.post('/api/Product', { name: 'Chair 2', brandId, mpn: 'R-M2' }).expect(200);
    const res = await t.post('/api/upsert', [
      { entity: 'Product', payload: { sku: 'R-A2', price: 5 } },
      { entity: 'Product', payload: { sku: 'R-A2', brandId, mpn: 'R-M2' } },
    ]).expect(200);
    expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Updated', 'Failed']);
  });

  it('read own: a select without the owner fields still finds the user’s own record', async () => {
    const role = (await t.post('/api/Role', { name: 'own reader', scopes: { Brand: { read: 'own', create: true } } }).expect(200)).body.id;
    await t.post('/api/User', { userName: 'owner', password: 'pw-owner', rolesIds: [role] }).expect(200);
    const token = (await request(t.server).get('/api/userSession').auth('owner', 'pw-owner').set('Authorization-Token-Only', 'true')).body.authorizationToken;
    const mine = (await request(t.server).post('/api/Brand').set('Authorization-Token', token).send({ name: 'Owned' }).expect(200)).body.id;
    const res = await request(t.server).get(`/api/Brand/${mine}?select=name`).set('Authorization-Token', token).expect(200);
    expect(res.body).toEqual({ id: mine, name: 'Owned' });
    await request(t.server).get(`/api/Brand/${brandId}?select=name`).set('Authorization-Token', token).expect(404);
  });

  it('cookie: the session answer (without the token) and sign-out work with the cookie alone, sign-out behind the CSRF header', async () => {
    const agent = request.agent(t.server);
    await agent.post('/api/userSession/cookie').send({ userName: 'admin', password: 'admin-test-password' }).expect(200);
    for (const only of [{}, { 'Authorization-Token-Only': 'true' }]) {
      const session = await agent.get('/api/v1/App/user').set(only).expect(200);
      expect(session.body.user.userName).toBe('admin');
      // The cookie is HttpOnly: its token never reaches a script through a body.
      expect(session.body.authorizationToken).toBeUndefined();
    }
    await agent.delete('/api/userSession').expect(403);
    await agent.get('/api/Brand').expect(200);
    await agent.delete('/api/userSession').set('X-Requested-With', 'XMLHttpRequest').expect(200);
    await agent.get('/api/Brand').expect(401);
    // the same through generation B's session route
    await agent.post('/api/v1/App/user/cookie').send({ userName: 'admin', password: 'admin-test-password' }).expect(200);
    await agent.delete('/api/v1/App/user').expect(403);
    await agent.get('/api/v1/Brand').expect(200);
    await agent.delete('/api/v1/App/user').set('X-Requested-With', 'XMLHttpRequest').expect(200);
    await agent.get('/api/v1/Brand').expect(401);
  });

  it('entityMassUpdate: ids and where together are refused', async () => {
    const res = await t.post('/api/entityMassUpdate', { entityName: 'Brand', ids: [brandId], where: [], values: { code: 'x' } }).expect(400);
    expect(res.body.error.code).toBe('CORE_VALIDATION_FAILED');
  });
});
