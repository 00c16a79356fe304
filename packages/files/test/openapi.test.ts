import SwaggerParser from '@apidevtools/swagger-parser';
import request from 'supertest';
import sharing from '@entity-records/sharing';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { openApiChecker } from '../../../test/support/openapi-checker';
import { dataUrl, pngOf, startFilesApi, type FilesTestApi } from './helpers';

describe.each(TEST_DBS)('OpenAPI of files and sharing on %s', (kind) => {
  let t: FilesTestApi;
  let doc: Parameters<typeof openApiChecker>[0] & { paths: Record<string, Record<string, { operationId?: string }>> };
  let checker: ReturnType<typeof openApiChecker>;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
    doc = (await request(t.server).get('/apidocs/openapi.json').expect(200)).body;
    checker = openApiChecker(doc);
  });
  afterAll(() => t.close());

  it('validates as OpenAPI 3.1 and describes every file route in both generations, and the public link once', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    for (const base of ['/api', '/api/v1']) {
      expect(Object.keys(doc.paths[`${base}/File`]).sort()).toEqual(['get', 'post']);
      for (const path of ['/File/createChunk', '/File/upload', '/Sharing']) expect(doc.paths[`${base}${path}`].post).toBeDefined();
      for (const path of ['/File/{id}/download', '/File/{id}/thumbnail/{size}']) expect(doc.paths[`${base}${path}`].get).toBeDefined();
    }
    expect(doc.paths['/api/v1/File/upload'].post.operationId).toBe('v1_uploadFile');
    // The uploads and the sharing create honour Idempotency-Key; downloads do not.
    for (const path of ['/api/File', '/api/v1/File/createChunk', '/api/File/upload', '/api/v1/Sharing']) {
      const post = doc.paths[path].post as { parameters?: unknown[]; responses: Record<string, { headers?: Record<string, unknown> }> };
      expect({ path, parameters: post.parameters }).toEqual({ path, parameters: expect.arrayContaining([{ $ref: '#/components/parameters/IdempotencyKey' }]) });
      expect(post.responses['200'].headers?.['Idempotent-Replayed']).toBeDefined();
      expect(post.responses['422']).toEqual({ $ref: '#/components/responses/IdempotencyMismatch' });
    }
    expect(JSON.stringify(doc.paths['/api/File/{id}/download'])).not.toContain('IdempotencyKey');
    expect(Object.keys(doc.paths['/sharings/{file}']).sort()).toEqual(['get', 'post']);
  });

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('answers as documented for every upload method, downloads, thumbnails and sharing', async () => {
      const call = async (method: 'get' | 'post', path: string, template: string, body?: Record<string, unknown>, valid = true) => {
        if (body && valid) checker.requestBody(`${base}${template}`, method, body);
        const res = method === 'get' ? await t.get(`${base}${path}`) : await t.post(`${base}${path}`, body);
        checker.response(`${base}${template}`, method, res);
        return res;
      };
      const png = await pngOf(64, 32);
      const image = await call('post', '/File', '/File', { name: 'doc.png', fileContents: dataUrl(png, 'image/png') });
      expect(image.status).toBe(200);
      const chunk = { id: `oa-${g}`, name: 'c.bin', fileUniqueHash: `oa-${g}`, start: 0, piecesCount: 2, piece: dataUrl('ab') };
      expect((await call('post', '/File', '/File', chunk)).body).toEqual({ chunks: ['0'] });
      expect((await call('post', '/File/createChunk', '/File/createChunk', { ...chunk, start: 2 })).body).toMatchObject({ id: `oa-${g}` });
      expect((await call('post', '/File', '/File', { ...chunk, start: 1 })).status).toBe(409);
      expect((await call('post', '/File', '/File', { name: 'x.txt' }, false)).status).toBe(400);
      const multipart = await t.post(`${base}/File/upload`).attach('file', Buffer.from('m'), 'm.txt');
      checker.requestBody(`${base}/File/upload`, 'post', undefined, 'multipart/form-data');
      checker.response(`${base}/File/upload`, 'post', multipart);
      expect(multipart.status).toBe(200);
      const wrongType = await t.post(`${base}/File/upload`, { name: 'x' });
      checker.response(`${base}/File/upload`, 'post', wrongType);
      const download = await t.get(`${base}/File/${image.body.id}/download`);
      expect(checker.response(`${base}/File/{id}/download`, 'get', download)).toEqual(['application/octet-stream']);
      const part = await t.get(`${base}/File/${image.body.id}/download`).set('Range', 'bytes=0-9');
      expect([part.status, checker.response(`${base}/File/{id}/download`, 'get', part)]).toEqual([206, ['application/octet-stream']]);
      const past = await t.get(`${base}/File/${image.body.id}/download`).set('Range', `bytes=${png.length}-`);
      expect(past.status).toBe(416);
      checker.response(`${base}/File/{id}/download`, 'get', past);
      const thumb = await t.get(`${base}/File/${image.body.id}/thumbnail/small`);
      expect(checker.response(`${base}/File/{id}/thumbnail/{size}`, 'get', thumb)).toEqual(['image/png']);
      checker.response(`${base}/File/{id}/thumbnail/{size}`, 'get', await t.get(`${base}/File/nope/thumbnail/small`));
      const shared = await call('post', '/Sharing', '/Sharing', { fileId: image.body.id, name: 'shared', allowedUsage: 1 });
      expect(shared.status).toBe(200);
      await call('get', `/Sharing/${shared.body.id}`, '/Sharing/{id}');
      await call('get', '/Sharing', '/Sharing');
      const link = new URL(shared.body.link).pathname;
      checker.response('/sharings/{file}', 'get', await request(t.server).get(link).set('Range', `bytes=${png.length}-`));
      checker.response('/sharings/{file}', 'get', await request(t.server).get(link).set('Range', 'bytes=0-9'));
      checker.response('/sharings/{file}', 'get', await request(t.server).get(link));
    });
  });
});
