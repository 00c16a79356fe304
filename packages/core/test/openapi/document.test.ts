import SwaggerParser from '@apidevtools/swagger-parser';
import request from 'supertest';
import type { TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { operations, startWithDocument, type Doc } from './support';

describe('OpenAPI document', () => {
  let t: TestApi;
  let doc: Doc;
  beforeAll(async () => ({ t, doc } = await startWithDocument('sqlite', { entities: testEntities })));
  afterAll(() => t.close());

  it('is served without a token and validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('says of every object schema which properties it takes (generators read a bare object as empty)', () => {
    const bare: string[] = [];
    const visit = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${at}[${i}]`));
      const schema = node as Record<string, unknown>;
      const isObject = schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'));
      const open = ['properties', 'additionalProperties', 'patternProperties', 'oneOf', 'anyOf', 'allOf', '$ref'].some((k) => k in schema);
      if (isObject && !open) bare.push(at);
      for (const [key, value] of Object.entries(schema)) visit(value, `${at}.${key}`);
    };
    visit(doc, '');
    expect(bare).toEqual([]);
    expect(JSON.stringify(doc)).toContain('"additionalProperties":true');
  });

  it('is the same document api.openapi() returns', () => {
    expect(doc).toEqual(JSON.parse(JSON.stringify(t.api.openapi())));
  });

  it('gives every operation a unique operationId and responses', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(50);
    const ids = ops.map(({ op }) => op.operationId);
    for (const { path, method, op } of ops) {
      expect({ path, method, operationId: typeof op.operationId }).toEqual({ path, method, operationId: 'string' });
      expect({ path, method, responses: Object.keys(op.responses ?? {}).length > 0 }).toEqual({ path, method, responses: true });
    }
    const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(duplicates).toEqual([]);
  });

  it('only documents paths that exist under one of the two bases, and the two public change routes at the root', () => {
    const root = ['/listening/entity/{entity}/{id}.json', '/data/publicData.json'];
    for (const path of Object.keys(doc.paths).filter((p) => !root.includes(p))) expect(path).toMatch(/^\/api\/(v1\/)?[A-Za-z]/);
    for (const path of root) expect(doc.paths).toHaveProperty([path]);
  });

  it('declares the token as an apiKey scheme in the Authorization-Token header and requires it by default', () => {
    expect(doc.components.securitySchemes.tokenAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization-Token' });
    expect(doc.security).toContainEqual({ tokenAuth: [] });
    expect(doc.components.securitySchemes.cookieAuth).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'er_session' });
  });

  it('serves Swagger UI at /apidocs/, also to a client that asks for JSON (CONTRACT §12)', async () => {
    const res = await request(t.server).get('/apidocs/').expect(200).expect('Content-Type', /text\/html/);
    expect(res.text).toMatch(/swagger-ui/i);
    const asked = await request(t.server).get('/apidocs/').set('Accept', 'application/json').expect(200).expect('Content-Type', /text\/html/);
    expect(asked.text).toMatch(/swagger-ui/i);
    const init = await request(t.server).get('/apidocs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('openapi.json');
  });
});

describe.each(TEST_DBS)('API docs on %s', (kind) => {
  /** Swagger UI's page or its script (a 404 names the path, which may say swagger-ui). */
  const PAGE = /swagger-ui-bundle|SwaggerUIBundle/;
  let t: TestApi;
  beforeAll(async () => ({ t } = await startWithDocument(kind, { entities: testEntities })));
  afterAll(() => t.close());

  it('serves Swagger UI and the document to GET and HEAD only: other methods get no page (404 of the host), not the page with 200', async () => {
    for (const path of ['/apidocs/', '/apidocs/openapi.json', '/apidocs/swagger-ui-init.js', '/apidocs/anything']) {
      for (const method of ['post', 'put', 'patch', 'delete', 'trace'] as const) {
        const res = await request(t.server)[method](path).set('Content-Type', 'application/json').send('{}');
        expect([method, path, res.status, PAGE.test(res.text ?? '')]).toEqual([method, path, 404, false]);
      }
      // OPTIONS gets Express's list of the methods a path takes, never the page.
      expect(PAGE.test((await request(t.server).options(path)).text ?? '')).toBe(false);
    }
    await request(t.server).head('/apidocs/').expect(200).expect('Content-Type', /text\/html/);
    await request(t.server).head('/apidocs/openapi.json').expect(200).expect('Content-Type', /application\/json/);
    await request(t.server).get('/apidocs/openapi.json').expect(200).expect('Content-Type', /application\/json/);
  });
});
