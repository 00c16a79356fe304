import { createHash } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/** Express's ETag of a text (its `etag` module): length in hex and the SHA-1 in base64, weak unless asked. */
const etag = (text: string, { weak = false } = {}) =>
  `${weak ? 'W/' : ''}"${Buffer.byteLength(text).toString(16)}-${createHash('sha1').update(text).digest('base64').slice(0, 27)}"`;

describe.each(TEST_DBS)('the answer of a record: the bytes res.json would send, on %s', (kind) => {
  let t: TestApi;
  let id: string;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    id = (await t.post('/api/Brand', { name: 'Ünïcode <&> "quoted"' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  /** A request to an app of its own that holds the API's router, with the admin token. */
  const to = (app: express.Express) => ({
    get: (path: string) => request(app).get(path).set('Authorization-Token', t.token),
    head: (path: string) => request(app).head(path).set('Authorization-Token', t.token),
  });

  it('sends compact JSON with its type, length and version, for GET, HEAD, PATCH and POST', async () => {
    const got = await t.get(`/api/Brand/${id}`).expect(200);
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(got.text).toBe(JSON.stringify(JSON.parse(got.text)));
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.text));
    expect(got.headers.etag).toBe('"1"');
    expect(got.body.name).toBe('Ünïcode <&> "quoted"');

    const head = await to(t.app).head(`/api/Brand/${id}`).expect(200);
    expect(head.headers['content-length']).toBe(got.headers['content-length']);
    expect(head.headers.etag).toBe('"1"');
    expect(head.text ?? '').toBe('');

    const patched = await t.patch(`/api/v1/Brand/${id}`, { code: 'u1' }).expect(200);
    expect(patched.headers.etag).toBe('"2"');
    expect(patched.body.code).toBe('u1');
    expect(Number(patched.headers['content-length'])).toBe(Buffer.byteLength(patched.text));

    const created = await t.post('/api/v1/Brand', { name: `Created ${kind}` }).expect(200);
    expect(created.headers.etag).toBe('"1"');
    expect(created.text).toBe(JSON.stringify(created.body));
    expect(Number(created.headers['content-length'])).toBe(Buffer.byteLength(created.text));
  });

  it("keeps the host's JSON settings", async () => {
    const app = express().set('json spaces', 2).set('json escape', true).use(t.api.router);
    const got = await to(app).get(`/api/Brand/${id}`).expect(200);
    expect(got.text).toContain('\n  "id": ');
    expect(got.text).toContain('\\u003c\\u0026\\u003e');
    expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.text));
  });

  it('answers a matching If-None-Match with 304 and another with the record', async () => {
    const current = (await t.get(`/api/Brand/${id}`).expect(200)).headers.etag as string;
    await t.get(`/api/Brand/${id}`).set('If-None-Match', current).expect(304);
    const other = await t.get(`/api/Brand/${id}`).set('If-None-Match', '"999"').expect(200);
    expect(other.body.id).toBe(id);
    expect(other.headers.etag).toBe(current);
  });

  it("sends a list with the app's ETag of its text, and answers a matching If-None-Match with 304", async () => {
    const lists = ['/api/Brand?maxSize=5', '/api/v1/Brand?maxSize=5&select=name', `/api/entityRelation?entityName=Brand&id=${id}&link=products`, `/api/v1/Brand/${id}/products`];
    for (const path of lists) {
      const got = await t.get(path).expect(200);
      expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.text));
      expect(got.headers.etag).toBe(etag(got.text, { weak: true }));
      await t.get(path).set('If-None-Match', got.headers.etag as string).expect(304);
      const head = await to(t.app).head(path).expect(200);
      expect(head.headers.etag).toBe(got.headers.etag);
      expect(head.headers['content-length']).toBe(got.headers['content-length']);
    }
    const strong = await to(express().set('etag', 'strong').use(t.api.router)).get('/api/Brand?maxSize=5').expect(200);
    expect(strong.headers.etag).toBe(etag(strong.text));
    const none = await to(express().set('etag', false).use(t.api.router)).get('/api/Brand?maxSize=5').expect(200);
    expect(none.headers.etag).toBeUndefined();
    const own = await to(express().set('etag', (body: Buffer | string) => `"own-${Buffer.byteLength(body)}"`).use(t.api.router)).get('/api/Brand?maxSize=5').expect(200);
    expect(own.headers.etag).toBe(`"own-${Buffer.byteLength(own.text)}"`);
    const spaced = await to(express().set('json spaces', 2).use(t.api.router)).get('/api/Brand?maxSize=5').expect(200);
    expect(spaced.text).toContain('\n  "');
    expect(spaced.headers.etag).toBe(etag(spaced.text, { weak: true }));
  });

  it('sends the answers of bulk writes as res.json would, without an ETag, in both generations', async () => {
    const bulk = [
      ...['/api/upsert', '/api/v1/MassActions/action/upsert'].map((path) => ({
        path,
        body: [{ entity: 'Brand', payload: { name: `Upserted ${path} ${kind} ü` } }, { entity: 'Brand', payload: { name: 'Ünïcode <&> "quoted"', code: 'u2' } }],
        shows: (body: { status: string }[]) => expect(body.map((r) => r.status)).toEqual(['Created', path === '/api/upsert' ? 'Updated' : 'NotModified']),
      })),
      ...['/api/upsertAsync', '/api/v1/upsertAsync'].map((path) => ({ path, body: [{ entity: 'Brand', payload: { name: `Queued ${path} ${kind}` } }], shows: (body: { jobId: string }) => expect(typeof body.jobId).toBe('string') })),
      ...['/api/entityMassUpdate', '/api/v1/entityMassUpdate'].map((path, i) => ({
        path,
        body: { entityName: 'Brand', ids: [id], values: { code: `mass ${i}` } },
        shows: (body: { updated: number }) => expect(body).toEqual({ updated: 1, errors: [] }),
      })),
    ];
    for (const { path, body, shows } of bulk) {
      const got = await t.post(path, body).expect(200);
      shows(got.body);
      expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(got.text).toBe(JSON.stringify(got.body));
      expect(Number(got.headers['content-length'])).toBe(Buffer.byteLength(got.text));
      expect(got.headers.etag).toBeUndefined();
    }
    const spaced = await request(express().set('json spaces', 2).use(t.api.router)).post('/api/upsert').set('Authorization-Token', t.token).send([{ entity: 'Brand', payload: { name: `Spaced ${kind}` } }]).expect(200);
    // The host's JSON settings hold: the answer goes through res.json then.
    expect(spaced.text).toContain('\n  {');
    expect(Number(spaced.headers['content-length'])).toBe(Buffer.byteLength(spaced.text));
  });

  it('replays the same bytes for a repeated Idempotency-Key', async () => {
    const send = () => t.post('/api/Brand', { name: `Kept ${kind}` }).set('Idempotency-Key', `answers-${kind}`).expect(200);
    const first = await send();
    const again = await send();
    expect(again.text).toBe(first.text);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    const upsert = () => t.post('/api/upsert', [{ entity: 'Brand', payload: { name: `Kept upsert ${kind}` } }]).set('Idempotency-Key', `answers-upsert-${kind}`).expect(200);
    const once = await upsert();
    const twice = await upsert();
    expect(twice.headers['idempotent-replayed']).toBe('true');
    expect(twice.text).toBe(once.text);
    expect(twice.headers.etag).toBe(once.headers.etag);
  });
});
