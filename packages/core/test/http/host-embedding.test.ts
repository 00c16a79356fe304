import express from 'express';
import request from 'supertest';
import { BootError, createEntityApi, requestContext, type EntityApi, type EntityApiOptions } from '@entity-records/core';
import { ADMIN } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

describe.each(TEST_DBS)('good manners in a host app on %s', (kind) => {
  let db: TestDatabase;
  const apis: EntityApi[] = [];
  const errors: unknown[] = [];
  const logger = { info() {}, warn() {}, error: (facts: unknown) => void errors.push(facts) };

  /** An instance on the shared database (the schema is made once, by the first). */
  async function start(options: Partial<EntityApiOptions> = {}): Promise<EntityApi> {
    const api = createEntityApi({ database: db.url, entities: testEntities, admin: ADMIN, logger, auth: { passwordCost: 14, ...options.auth }, ...options });
    apis.push(api);
    await api.ready();
    return api;
  }

  async function tokenOf(app: express.Express, prefix = '') {
    const res = await request(app).get(`${prefix}/api/userSession`).auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true').expect(200);
    return res.body.authorizationToken as string;
  }

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  // Each test's instances close with it: eleven open at once held more connections than a
  // PostgreSQL of max_connections 100 gives the suite beside the other worker's tests.
  afterEach(async () => {
    for (const api of apis.splice(0)) await api.close();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('serves only the generations asked for, and documents only those', async () => {
    const onlyA = await start({ generations: ['A'] });
    const app = express().use(onlyA.router);
    const token = await tokenOf(app);
    await request(app).get('/api/Brand').set('Authorization-Token', token).expect(200);
    expect((await request(app).get('/api/v1/Brand').set('Authorization-Token', token)).status).toBe(404);
    const paths = Object.keys(onlyA.openapi().paths as object);
    expect(paths.some((p) => p.startsWith('/api/v1/'))).toBe(false);
    expect(paths).toContain('/api/Brand');
    const docA = (await request(app).get('/apidocs/openapi.json').expect(200)).body;
    expect(docA.info.description).toBe('Records of every entity type under /api/ (generation A).');

    const onlyB = await start({ generations: ['B'] });
    const appB = express().use(onlyB.router);
    const tokenB = (await request(appB).get('/api/v1/App/user').auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken;
    await request(appB).get('/api/v1/Brand').set('Authorization-Token', tokenB).expect(200);
    expect((await request(appB).get('/api/Brand').set('Authorization-Token', tokenB)).status).toBe(404);
    // The public change routes sit at the root, outside both generations.
    const root = ['/listening/entity/{entity}/{id}.json', '/data/publicData.json'];
    expect(Object.keys(onlyB.openapi().paths as object).filter((p) => !root.includes(p)).every((p) => p.startsWith('/api/v1/'))).toBe(true);
    expect((onlyB.openapi().info as { description: string }).description).toBe('Records of every entity type under /api/v1/ (generation B).');
    expect(((await start()).openapi().info as { description: string }).description).toBe(
      'Records of every entity type under /api/ (generation A) and /api/v1/ (generation B).',
    );
  });

  it('leaves /apidocs out when asked, and keeps the document for api.openapi()', async () => {
    const api = await start({ apidocs: false });
    const app = express().use(api.router);
    expect((await request(app).get('/apidocs/openapi.json')).status).toBe(404);
    expect((await request(app).get('/apidocs/')).status).toBe(404);
    expect(api.openapi().openapi).toBe('3.1.0');
  });

  it('puts the mount path into the OpenAPI servers, after the public URL', async () => {
    const api = await start();
    const app = express().use('/records', api.router);
    const doc = (await request(app).get('/records/apidocs/openapi.json').expect(200)).body;
    expect(doc.servers).toEqual([{ url: '/records' }]);
    await request(app).get('/records/api/Brand').set('Authorization-Token', await tokenOf(app, '/records')).expect(200);
    const atRoot = (await request(express().use(api.router)).get('/apidocs/openapi.json').expect(200)).body;
    expect(atRoot.servers).toEqual([{ url: '/' }]);
    const published = await start({ publicUrl: 'https://pim.example.com/' });
    const nested = (await request(express().use('/v2/records', published.router)).get('/v2/records/apidocs/openapi.json').expect(200)).body;
    expect(nested.servers).toEqual([{ url: 'https://pim.example.com/v2/records' }]);
  });

  it('authenticates the host\'s own routes with api.authenticate()', async () => {
    const api = await start();
    const app = express();
    app.get('/me', api.authenticate(), (req, res) => void res.json({ user: requestContext(req).user?.userName }));
    app.get('/maybe', api.authenticate({ optional: true }), (req, res) => void res.json({ user: requestContext(req).user?.userName ?? null }));
    app.use(api.router);
    const token = await tokenOf(app);
    expect((await request(app).get('/me').set('Authorization-Token', token).expect(200)).body).toEqual({ user: 'admin' });
    const refused = await request(app).get('/me').expect(401);
    expect(refused.body.error.code).toBe('CORE_UNAUTHORIZED');
    expect(refused.headers['x-request-id']).toBeDefined();
    expect((await request(app).get('/me').set('Authorization-Token', 'forged').expect(401)).body.error.code).toBe('CORE_UNAUTHORIZED');
    expect((await request(app).get('/maybe').expect(200)).body).toEqual({ user: null });
    expect((await request(app).get('/maybe').set('Authorization-Token', token).expect(200)).body).toEqual({ user: 'admin' });
  });

  it('trusts the identity the host resolves from its own session (auth.resolveUser)', async () => {
    // The host's session, simulated by a header its own middleware would have checked.
    const api = await start({ auth: { passwordCost: 14, resolveUser: (req) => (req.headers['x-host-session'] === 'valid-admin-session' ? 'admin' : req.headers['x-host-session'] === 'ghost' ? 'nobody' : undefined) } });
    const app = express().use(api.router);
    await request(app).get('/api/Brand').set('X-Host-Session', 'valid-admin-session').expect(200);
    await request(app).post('/api/v1/Brand').set('X-Host-Session', 'valid-admin-session').send({ name: 'From the host session' }).expect(200);
    expect((await request(app).get('/api/Brand').set('X-Host-Session', 'ghost').expect(401)).body.error.message).toMatch(/'nobody' is no active user/);
    await request(app).get('/api/Brand').set('X-Host-Session', 'other').expect(401);
    await request(app).get('/api/Brand').expect(401);
    // A token still wins over the host's session.
    await request(app).get('/api/Brand').set('X-Host-Session', 'ghost').set('Authorization-Token', await tokenOf(app)).expect(200);
  });

  it('refuses at mount time a body parser the host put before the router, saying how to mount them', async () => {
    const api = await start();
    const before = express();
    before.use(express.json());
    let error: unknown;
    try {
      before.use(api.router);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(BootError);
    expect((error as BootError).code).toBe('CORE_CONFIG_INVALID');
    expect((error as BootError).message).toMatch(/a body parser \(jsonParser, from express\.json\(\) or the like\) is mounted before api\.router.*mount api\.router before it/);
    // The parser on the host's own paths, or after the router: the router parses its own bodies.
    const fine = express();
    fine.use('/host', express.json());
    fine.use(api.router);
    fine.use(express.json());
    const token = await tokenOf(fine);
    const malformed = await request(fine).post('/api/Brand').set('Authorization-Token', token).set('Content-Type', 'application/json').send('{"name": ').expect(400);
    expect(malformed.body.error.code).toBe('CORE_INVALID_JSON');
    await request(fine).post('/api/Brand').set('Authorization-Token', token).send({ name: 'Parsed by the router' }).expect(200);
  });

  it('refuses a body a host parser read inside another router with a code of its own, saying how to mount them, and logs it', async () => {
    const api = await start();
    const hostRouter = express.Router();
    hostRouter.use(express.json());
    hostRouter.use(api.router);
    const app = express().use(hostRouter);
    const token = await tokenOf(app);
    errors.length = 0;
    const res = await request(app).post('/api/Brand').set('Authorization-Token', token).send({ name: 'Read twice' }).expect(500);
    expect(res.body.error.code).toBe('CORE_BODY_READ_BY_HOST');
    expect(res.body.error.message).toMatch(/^A body parser of the host .* read this request's body before the API could: mount api\.router before the parser, or the parser on the host's own paths only$/);
    expect(res.headers['x-status-reason']).toBe(res.body.error.message);
    expect(errors).toEqual([expect.objectContaining({ status: 500, code: 'CORE_BODY_READ_BY_HOST', method: 'POST' })]);
    // Nothing was stored.
    const stored = await request(app).get('/api/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=Read twice').set('Authorization-Token', token).expect(200);
    expect(stored.body.total).toBe(0);
    await request(app).get('/api/Brand').set('Authorization-Token', token).expect(200);
  });
});
