import express from 'express';
import request from 'supertest';
import { createEntityApi, type EntityApi } from '@entity-records/core';
import { ADMIN } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/** The bytes of an answer, as the client reads them. */
const text = (test: request.Test) => test.buffer(true).parse((res, done) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (body += chunk));
  res.on('end', () => done(null, body));
});

describe.each(TEST_DBS)('the answer of a record: the bytes res.json would send, on %s', (kind) => {
  let db: TestDatabase;
  let api: EntityApi;
  let token: string;
  let id: string;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    api = createEntityApi({ database: db.url, entities: testEntities, admin: ADMIN, logger: { info() {}, warn() {}, error() {} } });
    await api.ready();
    const app = express().use(api.router);
    token = (await request(app).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken;
    id = (await request(app).post('/api/Brand').set('Authorization-Token', token).send({ name: 'Ünïcode <&> "quoted"' }).expect(200)).body.id;
  });
  afterAll(async () => {
    await api.close();
    await db.drop();
  });

  it('sends compact JSON with its type, length and version, for GET, HEAD, PATCH and POST', async () => {
    const app = express().use(api.router);
    const got = await text(request(app).get(`/api/Brand/${id}`).set('Authorization-Token', token)).expect(200);
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(got.body).toBe(JSON.stringify(JSON.parse(got.body)));
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.body));
    expect(got.headers.etag).toBe('"1"');
    expect(JSON.parse(got.body).name).toBe('Ünïcode <&> "quoted"');

    const head = await request(app).head(`/api/Brand/${id}`).set('Authorization-Token', token).expect(200);
    expect(head.headers['content-length']).toBe(got.headers['content-length']);
    expect(head.headers.etag).toBe('"1"');
    expect(head.text ?? '').toBe('');

    const patched = await text(request(app).patch(`/api/v1/Brand/${id}`).set('Authorization-Token', token).send({ code: 'u1' })).expect(200);
    expect(patched.headers.etag).toBe('"2"');
    expect(JSON.parse(patched.body).code).toBe('u1');
    expect(Number(patched.headers['content-length'])).toBe(Buffer.byteLength(patched.body));
  });

  it("keeps the host's JSON settings", async () => {
    const app = express().set('json spaces', 2).set('json escape', true).use(api.router);
    const got = await text(request(app).get(`/api/Brand/${id}`).set('Authorization-Token', token)).expect(200);
    expect(got.body).toContain('\n  "id": ');
    expect(got.body).toContain('\\u003c\\u0026\\u003e');
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.body));
  });

  it('answers a matching If-None-Match with 304 and another with the record', async () => {
    const app = express().use(api.router);
    const current = (await request(app).get(`/api/Brand/${id}`).set('Authorization-Token', token).expect(200)).headers.etag as string;
    await request(app).get(`/api/Brand/${id}`).set('Authorization-Token', token).set('If-None-Match', current).expect(304);
    const other = await request(app).get(`/api/Brand/${id}`).set('Authorization-Token', token).set('If-None-Match', '"999"').expect(200);
    expect(other.body.id).toBe(id);
    expect(other.headers.etag).toBe(current);
  });

  it('replays the same bytes for a repeated Idempotency-Key', async () => {
    const app = express().use(api.router);
    const send = () => text(request(app).post('/api/Brand').set('Authorization-Token', token).set('Idempotency-Key', `answers-${kind}`).send({ name: `Kept ${kind}` })).expect(200);
    const first = await send();
    const again = await send();
    expect(again.body).toBe(first.body);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
  });
});
