import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import request from 'supertest';
import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { finishedJob } from '../../../../test/support/jobs';
import { createAttribute, createWeight, FLAT, startAttributeApi } from './support';

type Param = { $ref?: string; name?: string; in?: string; description?: string };
type Operation = { operationId?: string; parameters?: Param[]; responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }> };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { parameters: Record<string, Param>; schemas: Record<string, unknown> } };

const BASES = ['/api', '/api/v1'];
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

async function fetchDocument(t: TestApi): Promise<Doc> {
  return (await request(t.server).get('/apidocs/openapi.json').expect(200)).body as Doc;
}

const params = (doc: Doc, op: Operation) => (op.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop() as string] : p));

describe.each(TEST_DBS)('attributes in the OpenAPI document on %s', (kind) => {
  let t: TestApi;
  let doc: Doc;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    doc = await fetchDocument(t);
  });
  afterAll(() => t.close());

  it('validates, with unique operationIds', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    const ids = Object.values(doc.paths).flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m].operationId));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it.each(BASES)('describes the four simple endpoints of entity types with attributes under %s', (base) => {
    expect(Object.keys(doc.paths[`${base}/Product/{id}/attributeValues`]).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths[`${base}/Product/{id}/addAttributes`])).toEqual(['post']);
    expect(Object.keys(doc.paths[`${base}/Product/{id}/upsertAttributeValues`])).toEqual(['post']);
    expect(doc.paths[`${base}/Brand/{id}/attributeValues`]).toBeUndefined();
    const prefix = base === '/api' ? '' : 'v1_';
    expect(doc.paths[`${base}/Product/{id}/attributeValues`].get.operationId).toBe(`${prefix}getProductAttributeValues`);
    expect(doc.paths[`${base}/Product/{id}/upsertAttributeValues`].post.operationId).toBe(`${prefix}upsertProductAttributeValues`);
  });

  it.each(BASES)('documents attributes=, allAttributes and Flatten-Attributes where they apply under %s', (base) => {
    const names = (op: Operation) => params(doc, op).map((p) => p.name);
    expect(names(doc.paths[`${base}/Product`].get)).toEqual(expect.arrayContaining(['attributes', 'allAttributes', 'Flatten-Attributes']));
    expect(names(doc.paths[`${base}/Brand`].get)).not.toContain('attributes');
    const flatten = (op: Operation) => params(doc, op).find((p) => p.name === 'Flatten-Attributes')?.description ?? '';
    for (const op of [doc.paths[`${base}/Product`].get, doc.paths[`${base}/Product/{id}`].get, doc.paths[`${base}/Product/{id}`].patch]) {
      expect(flatten(op)).toMatch(/virtual fields/);
    }
    expect(flatten(doc.paths[`${base}/Brand`].get)).toMatch(/no attributes/);
    expect(flatten(doc.paths[`${base}/Product`].get)).not.toMatch(/no effect/);
  });

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('answers the simple endpoints with bodies that match their schemas', async () => {
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      const local = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));
      ajv.addSchema(local({ $id: 'openapi', components: doc.components }));
      const check = (path: string, method: string, res: request.Response) => {
        const responses = doc.paths[`${base}${path}`][method].responses;
        let documented = responses[String(res.status)] ?? responses.default;
        if (documented.$ref) documented = (doc.components as unknown as { responses: Record<string, typeof documented> }).responses[documented.$ref.split('/').pop() as string];
        const validate = ajv.compile(local(documented.content?.['application/json'].schema));
        expect({ path, method, status: res.status, errors: validate(res.body) ? [] : validate.errors }).toEqual({ path, method, status: res.status, errors: [] });
      };
      const { measureId } = await createWeight(t, `w${base.length}`);
      const weight = await createAttribute(t, { code: `weight${base.length}`, type: 'float', measureId });
      const id = (await t.post(`${base}/Product`, { name: 'Documented' }).expect(200)).body.id;
      check('/Product/{id}/addAttributes', 'post', await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [weight] }).expect(200));
      check('/Product/{id}/upsertAttributeValues', 'post', await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: weight, value: 1 }]).expect(200));
      check('/Product/{id}/upsertAttributeValues', 'post', await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: weight, value: 'x' }]).expect(400));
      check('/Product/{id}/attributeValues', 'get', await t.get(`${base}/Product/${id}/attributeValues`).expect(200));
      check('/Product/{id}/attributeValues', 'get', await t.get(`${base}/Product/nope/attributeValues`).expect(404));
      check('/Product/{id}/attributeValues', 'delete', await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [weight, 'nope'] }).expect(200));
    });

    it('documents Flatten-Attributes on the bulk writes, which write attribute values with it and refuse them without', async () => {
      const code = `bulk${base.length}`;
      await createAttribute(t, { code, type: 'varchar' });
      const product = async () => (await t.post(`${base}/Product`, { name: 'Bulk' }).expect(200)).body.id as string;
      const valueOf = async (id: string) => (await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body[code];
      const upsert = (path: string) => async (id: string, value: string, flat: boolean) => {
        const res = await (flat ? t.post(path, [{ entity: 'Product', payload: { id, [code]: value } }]).set(FLAT) : t.post(path, [{ entity: 'Product', payload: { id, [code]: value } }])).expect(200);
        if (path.endsWith('Async')) return (await finishedJob(t, { base, id: res.body.jobId })).result[0].status as string;
        return res.body[0].status as string;
      };
      const mass = (method: 'post' | 'patch') => async (id: string, value: string, flat: boolean) => {
        const send = t[method](`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { [code]: value } });
        const res = await (flat ? send.set(FLAT) : send);
        return res.status === 200 && res.body.updated === 1 ? 'Updated' : `${res.status} ${res.body.error?.code}`;
      };
      type Write = [string, string, (id: string, value: string, flat: boolean) => Promise<string>];
      const writes: Write[] = [
        ['/upsert', 'post', upsert(`${base}/upsert`)],
        ['/upsertAsync', 'post', upsert(`${base}/upsertAsync`)],
        ['/entityMassUpdate', 'post', mass('post')],
        ['/entityMassUpdate', 'patch', mass('patch')],
      ];
      if (base === '/api/v1') writes.push(['/MassActions/action/upsert', 'post', upsert(`${base}/MassActions/action/upsert`)]);
      for (const [path, method, write] of writes) {
        const header = params(doc, doc.paths[`${base}${path}`][method]).find((p) => p.in === 'header' && p.name === 'Flatten-Attributes');
        const id = await product();
        const honoured = { flat: await write(id, `${path} ${method}`, true), plain: await write(id, 'plain', false), value: await valueOf(id) };
        expect({ path, method, documented: header?.description?.match(/virtual fields/)?.[0], ...honoured }).toEqual({
          path,
          method,
          documented: 'virtual fields',
          flat: 'Updated',
          plain: path.includes('psert') ? 'Failed' : '400 CORE_UNKNOWN_FIELD',
          value: `${path} ${method}`,
        });
      }
    });

    it('documents the If-Match and 412 the attribute endpoints and the link routes answer with', async () => {
      const attribute = await createAttribute(t, { code: `versioned${base.length}`, type: 'text' });
      const id = (await t.post(`${base}/Product`, { name: 'Versioned' }).expect(200)).body.id;
      const category = (await t.post(`${base}/Category`, { name: 'Versioned', code: `versioned-${base.length}` }).expect(200)).body.id;
      const stale = (test: request.Test) => test.set('Authorization-Token', t.token).set('If-Match', '"999"');
      const writes: [string, string, request.Test][] = [
        ['/Product/{id}/addAttributes', 'post', stale(request(t.server).post(`${base}/Product/${id}/addAttributes`)).send({ attributeIds: [attribute] })],
        ['/Product/{id}/upsertAttributeValues', 'post', stale(request(t.server).post(`${base}/Product/${id}/upsertAttributeValues`)).send([{ attributeId: attribute, value: 'x' }])],
        ['/Product/{id}/attributeValues', 'delete', stale(request(t.server).delete(`${base}/Product/${id}/attributeValues`)).send({ attributeIds: [attribute] })],
        ['/Product/{id}/categories', 'post', stale(request(t.server).post(`${base}/Product/${id}/categories`)).send({ id: category })],
        ['/Product/{id}/categories', 'delete', stale(request(t.server).delete(`${base}/Product/${id}/categories`)).send({ id: category })],
      ];
      for (const [path, method, send] of writes) {
        const res = await send;
        const op = doc.paths[`${base}${path}`][method];
        const documents = { ifMatch: params(doc, op).some((p) => p.in === 'header' && p.name === 'If-Match'), status412: '412' in op.responses };
        expect({ path, method, status: res.status, code: res.body.error?.code, ...documents }).toEqual({ path, method, status: 412, code: 'CORE_PRECONDITION_FAILED', ifMatch: true, status412: true });
      }
      expect((await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body).toEqual([]);
    });
  });
});
