import request from 'supertest';
import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, startAttributeApi } from '../attributes/support';

type Path = (string | number)[];

// Every 400 of a JSON body names, in `details.issues[].path`, the keys leading to what is wrong:
// `[]` for the body itself, never another field, and under the part of the body it is in.
describe.each(TEST_DBS)('the paths of validation issues on %s', (kind) => {
  let t: TestApi;
  let brand: string;
  let product: string;
  let attribute: string;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    brand = (await t.post('/api/Brand', { name: 'Issue brand' }).expect(200)).body.id;
    product = (await t.post('/api/Product', { name: 'Issue product' }).expect(200)).body.id;
    attribute = await createAttribute(t, { code: 'issueText', type: 'text' });
  });
  afterAll(() => t.close());

  /** A body sent as it is, with the admin's token (or none). */
  const send = (method: 'post' | 'patch' | 'put' | 'delete', path: string, body: string, token = true) => {
    const test = request(t.server)[method](path).set('Content-Type', 'application/json');
    return (token ? test.set('Authorization-Token', t.token) : test).send(body);
  };
  const issuesOf = (res: request.Response) => {
    expect({ status: res.status, code: res.body.error?.code }).toMatchObject({ status: 400 });
    return (res.body.error.details.issues as { path: Path; code: string }[]).map(({ path, code }) => ({ path, code }));
  };

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    const cookie = g === 'A' ? `${base}/userSession/cookie` : `${base}/App/user/cookie`;

    it('names the field of a cookie sign-in that is not a string, and each one missing', async () => {
      const res = await send('post', cookie, JSON.stringify({ userName: 'clara', password: 123 }), false);
      expect({ code: res.body.error.code, issues: issuesOf(res) }).toEqual({ code: 'CORE_VALIDATION_FAILED', issues: [{ path: ['password'], code: 'invalid_type' }] });
      expect(issuesOf(await send('post', cookie, JSON.stringify({ userName: 7, password: 'x' }), false))).toEqual([{ path: ['userName'], code: 'invalid_type' }]);
      expect(issuesOf(await send('post', cookie, '{}', false))).toEqual([
        { path: ['userName'], code: 'required' },
        { path: ['password'], code: 'required' },
      ]);
    });

    it('answers a JSON array where an object is expected with one issue at [], on every route that takes an object', async () => {
      const routes: ['post' | 'patch' | 'put' | 'delete', string, boolean?][] = [
        ['post', `${base}/Brand`],
        ['patch', `${base}/Brand/${brand}`],
        ['put', `${base}/Brand/${brand}`],
        ['post', `${base}/entityMassUpdate`],
        ['patch', `${base}/entityMassUpdate`],
        ['post', `${base}/entityRestore`],
        ['post', `${base}/startEntityListening`],
        ['post', cookie, false],
        ['post', `${base}/Brand/${brand}/products`],
        ['delete', `${base}/Brand/${brand}/products`],
        ['post', `${base}/Product/${product}/addAttributes`],
        ['delete', `${base}/Product/${product}/attributeValues`],
        ['patch', `${base}/Job/no-job`],
      ];
      for (const [method, path, token] of routes) {
        const res = await send(method, path, '[{"name":"x"}]', token);
        expect({ method, path, code: res.body.error?.code, issues: issuesOf(res) }).toEqual({ method, path, code: 'CORE_VALIDATION_FAILED', issues: [{ path: [], code: 'invalid_type' }] });
      }
    });

    it('names the text that holds a NUL character or a lone surrogate', async () => {
      expect(issuesOf(await send('post', `${base}/Brand`, '{"a":"\\u0000"}'))).toEqual([{ path: ['a'], code: 'nul_character' }]);
      expect(issuesOf(await send('post', `${base}/Brand`, '{"name":"ok","code":"a\\u0000b"}'))).toEqual([{ path: ['code'], code: 'nul_character' }]);
      expect(issuesOf(await send('post', `${base}/entityMassUpdate`, '{"entityName":"Brand","ids":["a"],"values":{"x":["ok","b\\u0000"]}}'))).toEqual([
        { path: ['values', 'x', 1], code: 'nul_character' },
      ]);
      expect(issuesOf(await send('post', `${base}/upsert`, '[{"entity":"Brand","payload":{"a\\u0000":1}}]'))).toEqual([{ path: [0, 'payload', 'a\u0000'], code: 'nul_character' }]);
      expect(issuesOf(await send('post', `${base}/Brand`, '{"name":"x","code":{"c":"\\ud800"}}'))).toEqual([{ path: ['code', 'c'], code: 'lone_surrogate' }]);
    });

    it('names the id of a link route as sent, a link object\'s field under the link, and a mass update\'s parts under their keys', async () => {
      expect(issuesOf(await t.post(`${base}/Brand/${brand}/products`, { id: 5 }))).toEqual([{ path: ['id'], code: 'invalid_format' }]);
      expect(issuesOf(await t.post(`${base}/Brand/${brand}/products`, { ids: ['a', 5] }))).toEqual([{ path: ['ids', 1], code: 'invalid_format' }]);
      expect(issuesOf(await send('delete', `${base}/Brand/${brand}/products`, '{"id":"not an id"}'))).toEqual([{ path: ['id'], code: 'invalid_format' }]);
      expect(issuesOf(await t.post(`${base}/Product`, { name: 'x', brand: { name: 5 } }))).toEqual([{ path: ['brand', 'name'], code: 'invalid_type' }]);
      expect(issuesOf(await t.post(`${base}/Product`, { name: 'x', brand: {} }))).toEqual([{ path: ['brand'], code: 'invalid_link_object' }]);
      expect(issuesOf(await t.post(`${base}/Product`, { name: 'x', categories: ['a', { name: `no code ${g}` }] }))).toEqual([{ path: ['categories', 1, 'code'], code: 'required' }]);
      expect(issuesOf(await t.post(`${base}/Product`, { name: 'x', categories: [{ name: 'c', code: { a: 1 } }] }))).toEqual([{ path: ['categories', 0, 'code'], code: 'invalid_link_object' }]);
      const mass = (body: Record<string, unknown>) => t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [product], ...body });
      expect(issuesOf(await mass({ values: { name: 5 } }))).toEqual([{ path: ['values', 'name'], code: 'invalid_type' }]);
      expect(issuesOf(await mass({ values: { nope: 1 } }))).toEqual([{ path: ['values', 'nope'], code: 'unknown_field' }]);
      expect(issuesOf(await mass({ addLinks: { nope: ['x'] } }))).toEqual([{ path: ['addLinks', 'nope'], code: 'unknown_field' }]);
      expect(issuesOf(await mass({ removeLinks: { categories: 'x' } }))).toEqual([{ path: ['removeLinks', 'categories'], code: 'invalid_type' }]);
      expect(issuesOf(await mass({ ids: ['a', 5], values: {} }))).toEqual([{ path: ['ids', 1], code: 'invalid_type' }]);
      expect(issuesOf(await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: ['a', 5] }))).toEqual([{ path: ['ids', 1], code: 'invalid_type' }]);
      const created = await t.post(`${base}/Product`, { id: 5, name: 'x' });
      expect({ code: created.body.error.code, issues: issuesOf(created) }).toEqual({ code: 'CORE_INVALID_ID', issues: [{ path: ['id'], code: 'invalid_format' }] });
    });

    it('names the item and key of an attribute endpoint body', async () => {
      const upsertValues = (body: unknown) => t.post(`${base}/Product/${product}/upsertAttributeValues`, body);
      expect(issuesOf(await upsertValues([{ attributeId: attribute, value: 'x' }, { attributeId: 'missing', value: 'x' }]))).toEqual([{ path: [1, 'attributeId'], code: 'unknown_attribute' }]);
      expect(issuesOf(await upsertValues([null]))).toEqual([{ path: [0], code: 'invalid_type' }]);
      expect(issuesOf(await upsertValues([{ attributeId: 5 }]))).toEqual([{ path: [0, 'attributeId'], code: 'invalid_type' }]);
      expect(issuesOf(await t.post(`${base}/Product/${product}/addAttributes`, { attributeIds: [attribute, 5] }))).toEqual([{ path: ['attributeIds', 1], code: 'invalid_type' }]);
      expect(issuesOf(await t.post(`${base}/Product/${product}/addAttributes`, {}))).toEqual([{ path: ['attributeIds'], code: 'required' }]);
      expect(issuesOf(await send('delete', `${base}/Product/${product}/attributeValues`, '{"attributeIds":"x"}'))).toEqual([{ path: ['attributeIds'], code: 'invalid_type' }]);
    });
  });
});
