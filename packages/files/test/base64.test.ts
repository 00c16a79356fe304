import { createHash } from 'node:crypto';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, dataUrl, listFiles, pngOf, startFilesApi, type FilesTestApi } from './helpers';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe.each(TEST_DBS)('base64 upload on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('creates a File with size, hash, mime type and links, and serves the bytes', async () => {
      const text = `hello ${base}\n`;
      const res = await t.post(`${base}/File`, { name: 'hello.txt', fileContents: dataUrl(text, 'text/plain') }).expect(200);
      expect(res.body).toMatchObject({
        name: 'hello.txt',
        mimeType: 'text/plain',
        fileSize: Buffer.byteLength(text),
        hash: sha256(text),
        width: null,
        height: null,
        downloadUrl: `http://files.test/api/File/${res.body.id}/download`,
        thumbnails: { small: null, medium: null, large: null },
      });
      expect(res.body.storageKey).toBeUndefined();
      expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const download = await t.get(`${base}/File/${res.body.id}/download`).buffer(true).parse(binary).expect(200);
      expect(download.body.toString()).toBe(text);
      expect(download.headers['content-type']).toBe('text/plain');
      expect(download.headers['content-disposition']).toBe(`attachment; filename="hello.txt"; filename*=UTF-8''hello.txt`);
      expect(download.headers['x-content-type-options']).toBe('nosniff');
      const read = await t.get(`${base}/File/${res.body.id}`).expect(200);
      expect(read.body).toMatchObject({ id: res.body.id, hash: sha256(text) });
    });

    it('records the type a data URL declares: a PNG sent as application/octet-stream stays so, unmeasured and without thumbnails', async () => {
      const png = await pngOf(40, 30);
      const res = await t.post(`${base}/File`, { name: 'pic.bin', fileContents: dataUrl(png, 'application/octet-stream') }).expect(200);
      expect(res.body).toMatchObject({ mimeType: 'application/octet-stream', width: null, height: null, thumbnails: { small: null, medium: null, large: null } });
      expect((await t.get(`${base}/File/${res.body.id}/thumbnail/small`).expect(404)).body.error.code).toBe('FILES_NO_THUMBNAIL');
      const download = await t.get(`${base}/File/${res.body.id}/download`).buffer(true).parse(binary).expect(200);
      expect(download.headers['content-type']).toBe('application/octet-stream');
      expect(Buffer.compare(download.body, png)).toBe(0);
    });

    it('measures images and serves PNG thumbnails of 128, 256 and 1024 px made on request', async () => {
      const png = await pngOf(2000, 1000);
      const res = await t.post(`${base}/File`, { id: `img-${_g}`, name: 'red.png', fileContents: dataUrl(png, 'image/png') }).expect(200);
      expect(res.body).toMatchObject({ id: `img-${_g}`, width: 2000, height: 1000, mimeType: 'image/png' });
      expect(res.body.thumbnails).toEqual({
        small: `http://files.test/api/File/img-${_g}/thumbnail/small`,
        medium: `http://files.test/api/File/img-${_g}/thumbnail/medium`,
        large: `http://files.test/api/File/img-${_g}/thumbnail/large`,
      });
      const sharp = (await import('sharp')).default;
      const thumbs = () => listFiles(t.storageDir).filter((f) => f.startsWith('thumbs/')).length;
      const before = thumbs();
      for (const [size, px] of [['small', 128], ['medium', 256], ['large', 1024]] as const) {
        const thumb = await t.get(`${base}/File/img-${_g}/thumbnail/${size}`).buffer(true).parse(binary).expect(200);
        expect(thumb.headers['content-type']).toBe('image/png');
        const meta = await sharp(thumb.body).metadata();
        expect({ size, format: meta.format, width: meta.width, height: meta.height }).toEqual({ size, format: 'png', width: px, height: px / 2 });
      }
      expect(thumbs()).toBe(before + 3);
      await t.get(`${base}/File/img-${_g}/thumbnail/small`).expect(200);
      expect(thumbs()).toBe(before + 3);
    });
  });
});
