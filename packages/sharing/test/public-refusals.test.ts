import request from 'supertest';
import sharing from '@entity-records/sharing';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, dataUrl, startFilesApi, type FilesTestApi } from '../../files/test/helpers';

/**
 * CONTRACT §17: public answers of a share link carry `Referrer-Policy: no-referrer` and
 * `X-Content-Type-Options: nosniff`, errors included. A request the router refuses before the
 * link's route (a query string it will not read: 400 `CORE_INVALID_QUERY`) was answered without
 * them, and its page could leak the link through the Referer.
 */
describe.each(TEST_DBS)('share link refusals before the route on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  it('carries the public headers when the query string is refused (400), and counts no use', async () => {
    const file = (await t.post('/api/File', { name: 'refused.txt', fileContents: dataUrl('refused', 'text/plain') }).expect(200)).body;
    const share = (await t.post('/api/Sharing', { fileId: file.id, allowedUsage: 1 }).expect(200)).body;
    const path = new URL(share.link).pathname;
    const queries = ['view=%FF', 'x[__proto__]=1', 'view=1&a%00=1', Array.from({ length: 5001 }, () => 'a').join('&')];
    for (const query of queries) {
      const res = await request(t.server).get(`${path}?${query}`).buffer(true).parse(binary);
      expect({ status: res.status, code: JSON.parse(res.body.toString()).error.code, referrer: res.headers['referrer-policy'], sniff: res.headers['x-content-type-options'] }).toEqual({
        status: 400,
        code: 'CORE_INVALID_QUERY',
        referrer: 'no-referrer',
        sniff: 'nosniff',
      });
    }
    expect((await t.get(`/api/Sharing/${share.id}`).expect(200)).body.used).toBe(0);
    // Other paths keep their own headers: the API's answers are not public links.
    const api = await request(t.server).get('/api/Brand?x=%FF').set('Authorization-Token', t.token).expect(400);
    expect(api.headers['referrer-policy']).toBeUndefined();
  });
});

/**
 * CONTRACT §17: JSON nested deeper than 64 levels is 400 in any body. A share link's `POST` reads
 * its body for the password: whether or not the link has one, and whether or not the password
 * comes in the header, a body no API route would take is refused, and nothing is used up.
 */
describe.each(TEST_DBS)('bodies a share link refuses on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  const nested = (depth: number) => `{"password":"secret-pw","x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

  it('is 400 for JSON nested deeper than 64 levels, or not JSON, and takes 64 levels', async () => {
    const file = (await t.post('/api/File', { name: 'deep.txt', fileContents: dataUrl('deep', 'text/plain') }).expect(200)).body;
    for (const password of [undefined, 'secret-pw']) {
      const share = (await t.post('/api/Sharing', { fileId: file.id, allowedUsage: 5, ...(password && { password }) }).expect(200)).body;
      const path = new URL(share.link).pathname;
      const post = (body: string, header?: string) => {
        const req = request(t.server).post(path).set('Content-Type', 'application/json');
        if (header) req.set('Sharing-Password', header);
        return req.send(body).buffer(true).parse(binary);
      };
      for (const [body, header] of [[nested(65)], [nested(65), 'secret-pw'], ['{"password":'], ['{"password":', 'secret-pw']] as const) {
        const res = await post(body, header);
        expect([password, body.length, header, res.status, JSON.parse(res.body.toString()).error.code]).toEqual([password, body.length, header, 400, 'CORE_INVALID_JSON']);
      }
      expect((await t.get(`/api/Sharing/${share.id}`).expect(200)).body.used).toBe(0);
      const taken = await post(nested(64));
      expect([password, taken.status, taken.body.toString()]).toEqual([password, 200, 'deep']);
    }
  });
});
