import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { openApiChecker } from '../../../../test/support/openapi-checker';
import { testEntities } from '../../../../test/support/fixtures';
import { fetchDocument, headerNames, operations, type Operation } from './support';

describe.each(TEST_DBS)('responses on %s match the document', (kind) => {
  let t: TestApi;
  let checker: ReturnType<typeof openApiChecker>;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    checker = openApiChecker(await fetchDocument(t));
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    /** Sends a request, checks its body against the request schema and the answer against the response schema. */
    async function call(method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, template: string, body?: unknown, valid = true) {
      if (body !== undefined && valid) checker.requestBody(`${base}${template}`, method, body);
      const res = await (method === 'delete' ? t.del(`${base}${path}`) : t[method](`${base}${path}`, body as object));
      checker.response(`${base}${template}`, method, res);
      return res;
    }

    it('for records of every field type, lists, updates, deletes and errors', async () => {
      const brand = await call('post', '/Brand', '/Brand', { name: `Maker ${base}`, code: 'MK' });
      expect(brand.status).toBe(200);
      const category = await call('post', '/Category', '/Category', { name: 'Chairs', code: `chairs-${base}` });
      const product = {
        name: 'Chair',
        sku: `CH-${base}`,
        mpn: base,
        description: 'A chair',
        price: 12.5,
        quantity: 3,
        isActive: false,
        releaseDate: '2024-02-29',
        availableAt: '2024-05-01T12:30:00+02:00',
        color: 'red',
        labels: ['new', 'eco'],
        specs: { legs: 4 },
        brandId: brand.body.id,
        categoriesIds: [category.body.id],
      };
      const created = await call('post', '/Product', '/Product', product);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ availableAt: '2024-05-01 10:30:00', brandName: `Maker ${base}` });
      const id = created.body.id as string;
      await call('post', '/Product', '/Product', { name: 'Bare', mpn: base });

      const mine = `where[0][type]=equals&where[0][attribute]=mpn&where[0][value]=${encodeURIComponent(base)}`;
      expect((await call('get', `/Product/${id}`, '/Product/{id}')).status).toBe(200);
      expect((await call('get', `/Product?${mine}&maxSize=5&sortBy=brand&asc=false`, '/Product')).body.list.length).toBe(2);
      expect((await call('get', `/Product?${mine}&totalOnly=true`, '/Product')).body).toEqual({ total: 2 });
      expect((await call('get', `/Product?${mine}&collectionOnly=true&select=name`, '/Product')).body.total).toBeUndefined();
      const where = encodeURIComponent(JSON.stringify([{ type: 'linkedWith', attribute: 'categories', value: [category.body.id] }]));
      expect((await call('get', `/Product?where=${where}`, '/Product')).body.total).toBe(1);
      expect((await call('get', `/Brand/${brand.body.id}`, '/Brand/{id}')).body.productsIds).toEqual([id]);
      expect((await call('get', '/User', '/User')).body.list[0].password).toBeUndefined();

      expect((await call('patch', `/Product/${id}`, '/Product/{id}', { quantity: 4, labels: [] })).status).toBe(200);
      expect((await call('put', `/Product/${id}`, '/Product/{id}', { availableAt: null })).status).toBe(200);
      expect((await call('post', '/Product', '/Product', { name: 'Again', sku: `CH-${base}` })).status).toBe(409);
      expect((await call('post', '/Product', '/Product', { name: 'Bad', quantity: 'x' }, false)).status).toBe(400);
      expect((await call('get', '/Product/nope', '/Product/{id}')).status).toBe(404);
      expect((await call('delete', `/Product/${id}`, '/Product/{id}')).body).toBe(true);
      const restored = await call('post', '/entityRestore', '/entityRestore', { entityName: 'Product', ids: [id] });
      expect(restored.body).toEqual({ restored: 1, errors: [] });
      expect((await call('get', '/metadata', '/metadata')).status).toBe(200);

      const upserted = await call('post', '/upsert', '/upsert', [
        { entity: 'Brand', payload: { name: `Upserted ${base}` } },
        { entity: 'Brand', payload: { name: `Upserted ${base}`, code: 'UP' } },
        { entity: 'Brand', payload: { name: 42 } },
      ]);
      expect(upserted.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Updated', 'Failed']);
      const related = await call('get', `/entityRelation?entityName=Product&id=${id}&link=categories`, '/entityRelation');
      expect(related.body.list.map((c: { id: string }) => c.id)).toEqual([category.body.id]);
      const linked = await call('post', '/Product', '/Product', { name: 'Stool', brand: { name: `Fresh ${base}` }, categories: [{ code: `chairs-${base}` }] });
      expect(linked.status).toBe(200);
      expect(linked.body.categoriesIds).toEqual([category.body.id]);
      expect(linked.body.brandName).toBe(`Fresh ${base}`);
      await call('post', '/Category', '/Category', { name: `Twin ${base}`, code: `twin-1-${base}` });
      await call('post', '/Category', '/Category', { name: `Twin ${base}`, code: `twin-2-${base}` });
      const ambiguous = await call('post', '/Product', '/Product', { name: 'Bench', categories: [{ name: `Twin ${base}` }] });
      expect(ambiguous.status).toBe(409);
      expect(ambiguous.body.error.code).toBe('CORE_CONFLICT');
    });

    it('for upsertAsync, the job it starts, and entityMassUpdate at once and as a job', async () => {
      /** Reads the job until it is done, checking every answer against the document. */
      const finished = async (jobId: string) => {
        for (let i = 0; i < 120; i++) {
          const job = await call('get', `/Job/${jobId}`, '/Job/{id}');
          expect(job.status).toBe(200);
          if (['Success', 'Failed', 'Canceled'].includes(job.body.status)) return job.body;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(`job ${jobId} did not finish`);
      };
      const started = await call('post', '/upsertAsync', '/upsertAsync', [
        { entity: 'Brand', payload: { name: `Async ${base}` } },
        { entity: 'Brand', payload: { name: `Async ${base}`, code: 'AS' } },
        { entity: 'Brand', payload: { name: 42 } },
      ]);
      expect(started.status).toBe(200);
      const upsertJob = await finished(started.body.jobId);
      expect(upsertJob).toMatchObject({ type: 'upsert', status: 'Success', progress: 100 });
      expect(upsertJob.result.map((r: { status: string }) => r.status)).toEqual(['Created', 'Updated', 'Failed']);
      expect((await call('post', '/upsertAsync', '/upsertAsync', { entity: 'Brand' }, false)).status).toBe(400);

      const brand = upsertJob.result[0].entity.id as string;
      const now = await call('post', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Brand', ids: [brand, 'missing'], values: { code: 'M1' } });
      expect(now.body).toEqual({ updated: 1, errors: [expect.objectContaining({ id: 'missing', code: 'CORE_NOT_FOUND' })] });
      const patched = await call('patch', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Brand', ids: [brand], values: { code: 'M2' } });
      expect(patched.body).toEqual({ updated: 1, errors: [] });
      const byWhere = await call('post', '/entityMassUpdate', '/entityMassUpdate', {
        entityName: 'Brand',
        where: [{ type: 'equals', attribute: 'name', value: `Async ${base}` }],
        values: { code: 'M3' },
      });
      expect(typeof byWhere.body.jobId).toBe('string');
      expect(await finished(byWhere.body.jobId)).toMatchObject({ type: 'massUpdate', status: 'Success', result: { updated: 1, errors: [] } });
      expect((await call('post', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Brand', values: { code: 'x' } }, false)).status).toBe(400);
      expect((await call('patch', '/entityMassUpdate', '/entityMassUpdate', { entityName: 'Nope', ids: [brand], values: {} }, false)).status).toBe(404);
      expect((await call('get', '/Job/nope', '/Job/{id}')).status).toBe(404);
    });
  });

  it('for linked records in generation B', async () => {
    const brand = await t.post('/api/Brand', { name: 'Linked maker' }).expect(200);
    const product = await t.post('/api/Product', { name: 'Linked chair', brandId: brand.body.id }).expect(200);
    const res = await t.get(`/api/v1/Product/${product.body.id}/brand`).expect(200);
    expect(res.body.list.map((b: { id: string }) => b.id)).toEqual([brand.body.id]);
    checker.response('/api/v1/Product/{id}/brand', 'get', res);
    checker.response('/api/v1/Brand/{id}/products', 'get', await t.get(`/api/v1/Brand/${brand.body.id}/products?select=name`).expect(200));
    checker.response('/api/v1/Product/{id}/categories', 'get', await t.get('/api/v1/Product/nope/categories').expect(404));
  });

  it('for the generation B upsert name', async () => {
    const res = await t.post('/api/v1/MassActions/action/upsert', [{ entity: 'Category', payload: { name: 'Mass', code: 'mass' } }]).expect(200);
    checker.response('/api/v1/MassActions/action/upsert', 'post', res);
    expect(res.body[0]).toMatchObject({ status: 'Created', stored: true });
  });

  it('for generation B names and sign-in', async () => {
    checker.response('/api/v1/Metadata', 'get', await t.get('/api/v1/Metadata').expect(200));
    const session = await request(t.server).get('/api/v1/App/user').auth('admin', 'admin-test-password').expect(200);
    checker.response('/api/v1/App/user', 'get', session);
    checker.response('/api/userSession', 'get', await request(t.server).get('/api/userSession').expect(401));
    const cookie = await request(t.server).post('/api/v1/App/user/cookie').send({ userName: 'admin', password: 'admin-test-password' }).expect(200);
    checker.response('/api/v1/App/user/cookie', 'post', cookie);
    checker.response('/api/userSession/cookie', 'delete', await request(t.server).delete('/api/userSession/cookie').expect(200));
    const delegated = await request(t.server).get('/api/userSession').auth('admin', 'admin-test-password').set('Authorization-Delegate', 'nobody');
    checker.response('/api/userSession', 'get', delegated);
  });

  it.each(GENERATIONS)('for a body the server cannot read as JSON: every operation with a JSON body documents the 415 it answers (generation %s)', async (_gen, base) => {
    const doc = await fetchDocument(t);
    const inBase = (path: string) => (base === '/api' ? path.startsWith('/api/') && !path.startsWith('/api/v1/') : path.startsWith('/api/v1/'));
    const withBody = operations(doc).filter(({ path, op }) => inBase(path) && op.requestBody?.content['application/json']);
    expect(withBody.length).toBeGreaterThan(10);
    for (const { path, method, op } of withBody) {
      // Path parameters need no real record: the body is read (and refused) before any route runs.
      const url = path.replace(/\{[^}]+\}/g, 'x');
      const res = await request(t.server)[method as 'post'](url).set('Authorization-Token', t.token).set('Content-Type', 'application/json; charset=iso-8859-1').send('{"name":"caf\u00e9"}');
      expect({ method, path, status: res.status, code: res.body.error?.code, documented: Object.keys(op.responses ?? {}).includes('415') }).toEqual({
        method,
        path,
        status: 415,
        code: 'CORE_UNSUPPORTED_MEDIA_TYPE',
        documented: true,
      });
      checker.response(path, method, res);
    }
  });

  it.each(['/api/userSession/cookie', '/api/v1/App/user/cookie'])('for the token times a cookie sign-in honours, documented as on the Basic sign-in (%s)', async (path) => {
    const doc = await fetchDocument(t);
    const session = path.replace(/\/cookie$/, '');
    for (const header of ['authorization-token-lifetime', 'authorization-token-idletime']) {
      expect(headerNames(doc, doc.paths[path].post as Operation)).toContain(header);
      expect(headerNames(doc, doc.paths[session].get as Operation)).toContain(header);
      // The server reads the header: a value out of the documented range is 400 naming it.
      const refused = await request(t.server).post(path).set(header, '-1').send({ userName: 'admin', password: 'admin-test-password' }).expect(400);
      expect(refused.body.error.details.issues[0].path).toEqual([header]);
      checker.response(path, 'post', refused);
    }
    // A lifetime of 0.0005 hours (1.8 s) ends the cookie's session.
    const signedIn = await request(t.server).post(path).set('Authorization-Token-Lifetime', '0.0005').send({ userName: 'admin', password: 'admin-test-password' }).expect(200);
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0];
    await request(t.server).get('/api/Brand').set('Cookie', cookie).expect(200);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await request(t.server).get('/api/Brand').set('Cookie', cookie).expect(401);
  });

  it('for throttled sign-ins', async () => {
    let last: request.Response | undefined;
    for (let i = 0; i < 12 && last?.status !== 429; i++) {
      last = await request(t.server).get('/api/v1/App/user').auth('ghost', 'wrong-password');
      checker.response('/api/v1/App/user', 'get', last);
    }
    expect(last?.status).toBe(429);
    expect(last?.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('for a role that may not read', async () => {
    const role = await t.post('/api/Role', { name: 'Brands only', scopes: { Brand: { read: 'all' } } }).expect(200);
    await t.post('/api/User', { userName: 'reader', password: 'reader-password', rolesIds: [role.body.id] }).expect(200);
    const session = await request(t.server).get('/api/userSession').auth('reader', 'reader-password').set('Authorization-Token-Only', 'true');
    const token = session.body.authorizationToken as string;
    const res = await request(t.server).get('/api/Product').set('Authorization-Token', token).expect(403);
    checker.response('/api/Product', 'get', res);
    checker.response('/api/v1/Brand', 'get', await request(t.server).get('/api/v1/Brand').set('Authorization-Token', token).expect(200));
  });
});
