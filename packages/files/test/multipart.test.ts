import { createHash } from 'node:crypto';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, listFiles, multipartBody, pngOf, startFilesApi, type FilesTestApi } from './helpers';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(TEST_DBS)('multipart upload on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, { maxFileSize: 100_000 });
  });
  afterAll(() => t.close());

  const objects = () => listFiles(t.storageDir).filter((f) => f.startsWith('files/')).length;

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('stores the file of the field `file` with its part type and name', async () => {
      const png = await pngOf(300, 200);
      const res = await t.post(`${base}/File/upload`).attach('file', png, { filename: 'pic.png', contentType: 'image/png' }).expect(200);
      expect(res.body).toMatchObject({ name: 'pic.png', mimeType: 'image/png', fileSize: png.length, hash: sha256(png), width: 300, height: 200 });
      const down = await t.get(`${base}/File/${res.body.id}/download`).buffer(true).parse(binary).expect(200);
      expect(Buffer.compare(down.body, png)).toBe(0);
    });

    it('types a part sent as application/octet-stream by its name', async () => {
      const res = await t.post(`${base}/File/upload`).attach('file', Buffer.from('{}'), { filename: 'data.json', contentType: 'application/octet-stream' }).expect(200);
      expect(res.body.mimeType).toBe('application/json');
      const unknown = await t.post(`${base}/File/upload`).attach('file', Buffer.from('?'), { filename: 'data.xyz', contentType: 'application/octet-stream' }).expect(200);
      expect(unknown.body.mimeType).toBe('application/octet-stream');
    });

    it('still measures a raster image sent as an application/octet-stream part, and types it by its bytes', async () => {
      const png = await pngOf(30, 20);
      const res = await t.post(`${base}/File/upload`).attach('file', png, { filename: 'pic.bin', contentType: 'application/octet-stream' }).expect(200);
      expect(res.body).toMatchObject({ mimeType: 'image/png', width: 30, height: 20 });
      await t.get(`${base}/File/${res.body.id}/thumbnail/small`).expect(200);
    });

    it('takes name and id from form fields, and UTF-8 file names', async () => {
      const res = await t.post(`${base}/File/upload`).field('id', `mp-${g}`).field('name', 'renamed.txt').attach('file', Buffer.from('abc'), { filename: 'x.txt', contentType: 'text/plain' }).expect(200);
      expect(res.body).toMatchObject({ id: `mp-${g}`, name: 'renamed.txt', mimeType: 'text/plain' });
      const utf8 = await t.post(`${base}/File/upload`).attach('file', Buffer.from('ü'), { filename: 'Überblick – 2024.txt' }).expect(200);
      expect(utf8.body.name).toBe('Überblick – 2024.txt');
      const down = await t.get(`${base}/File/${utf8.body.id}/download`).expect(200);
      expect(down.headers['content-disposition']).toBe(`attachment; filename="_berblick _ 2024.txt"; filename*=UTF-8''%C3%9Cberblick%20%E2%80%93%202024.txt`);
    });

    it('answers 415 for a JSON body, 400 without a file or with a file elsewhere, and keeps nothing', async () => {
      const before = objects();
      expect((await t.post(`${base}/File/upload`, { name: 'a.txt', fileContents: 'data:text/plain;base64,YQ==' }).expect(415)).body.error.code).toBe('CORE_UNSUPPORTED_MEDIA_TYPE');
      expect((await t.post(`${base}/File/upload`).field('name', 'a.txt').expect(400)).body.error.code).toBe('FILES_CONTENT_REQUIRED');
      expect((await t.post(`${base}/File/upload`).attach('other', Buffer.from('a'), 'a.txt').expect(400)).body.error.code).toBe('FILES_CONTENT_INVALID');
      const two = await t.post(`${base}/File/upload`).attach('file', Buffer.from('a'), 'a.txt').attach('file', Buffer.from('b'), 'b.txt').expect(400);
      expect(two.body.error.code).toBe('FILES_CONTENT_INVALID');
      expect((await t.post(`${base}/File/upload`).field('colour', 'red').attach('file', Buffer.from('a'), 'a.txt').expect(400)).body.error.code).toBe('CORE_UNKNOWN_FIELD');
      expect(objects()).toBe(before);
    });

    it('answers 413 for a file over maxFileSize and refuses names with a path, keeping nothing', async () => {
      const before = objects();
      const big = await t.post(`${base}/File/upload`).attach('file', Buffer.alloc(100_001), 'big.bin').expect(413);
      expect(big.body.error.code).toBe('FILES_TOO_LARGE');
      for (const filename of ['../../etc/passwd', 'dir/file.txt', 'C:\\temp\\x.txt', '..']) {
        const { body, contentType } = multipartBody([{ name: 'file', filename, type: 'text/plain', value: 'a' }]);
        const res = await t.post(`${base}/File/upload`).set('Content-Type', contentType).send(body).expect(400);
        expect({ filename, code: res.body.error.code }).toEqual({ filename, code: 'FILES_NAME_INVALID' });
      }
      expect(objects()).toBe(before);
    });

    it('refuses a multipart body on other routes of generation A with 415', async () => {
      const res = await t.post(`${base}/File`).attach('file', Buffer.from('a'), 'a.txt');
      if (g === 'A') expect(res.status).toBe(415);
      else expect(res.status).toBe(400);
    });
  });
});
