import fs from 'node:fs';
import path from 'node:path';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, dataUrl, listFiles, startFilesApi, type FilesTestApi } from './helpers';

const TEXT = '0123456789abcdef';

describe.each(TEST_DBS)('byte ranges of downloads on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    let file: { id: string; hash: string };
    beforeAll(async () => {
      file = (await t.post(`${base}/File`, { name: 'digits.txt', fileContents: dataUrl(TEXT, 'text/plain') }).expect(200)).body;
    });
    const download = (headers: Record<string, string> = {}) => {
      const test = t.get(`${base}/File/${file.id}/download`).buffer(true).parse(binary);
      for (const [name, value] of Object.entries(headers)) test.set(name, value);
      return test;
    };

    it('announces ranges and a strong validator on a whole download', async () => {
      const res = await download().expect(200);
      expect(res.body.toString()).toBe(TEXT);
      expect(res.headers).toMatchObject({ 'accept-ranges': 'bytes', etag: `"${file.hash}"`, 'content-length': '16' });
      expect(res.headers['content-range']).toBeUndefined();
    });

    it('answers one range with 206, Content-Range and only those bytes', async () => {
      const cases: [string, string, string][] = [
        ['bytes=2-5', 'bytes 2-5/16', '2345'],
        ['bytes=10-', 'bytes 10-15/16', 'abcdef'],
        ['bytes=-3', 'bytes 13-15/16', 'def'],
        ['bytes=12-100', 'bytes 12-15/16', 'cdef'],
        ['bytes=-100', 'bytes 0-15/16', TEXT],
        ['bytes=0-0', 'bytes 0-0/16', '0'],
      ];
      for (const [range, contentRange, bytes] of cases) {
        const res = await download({ Range: range }).expect(206);
        expect({ range, contentRange: res.headers['content-range'], length: res.headers['content-length'], body: res.body.toString() }).toEqual({
          range,
          contentRange,
          length: String(bytes.length),
          body: bytes,
        });
        expect(res.headers['content-disposition']).toMatch(/^attachment; /);
      }
    });

    it('answers 416 with the size for a range past the end, and nothing else', async () => {
      for (const range of ['bytes=16-', 'bytes=16-20', 'bytes=-0']) {
        const res = await download({ Range: range }).expect(416);
        expect({ range, contentRange: res.headers['content-range'] }).toEqual({ range, contentRange: 'bytes */16' });
        expect(JSON.parse(res.body.toString()).error.code).toBe('FILES_RANGE_NOT_SATISFIABLE');
      }
    });

    it('sends the whole file for ranges it does not serve: several, malformed, another unit, a stale If-Range', async () => {
      const cases: Record<string, string>[] = [{ Range: 'bytes=0-1,4-5' }, { Range: 'bytes=5-2' }, { Range: 'bytes=x-' }, { Range: 'items=0-1' }, { Range: 'bytes=2-5', 'If-Range': '"other"' }];
      for (const headers of cases) {
        const res = await download(headers).expect(200);
        expect({ headers, body: res.body.toString() }).toEqual({ headers, body: TEXT });
      }
      const current = await download({ Range: 'bytes=2-5', 'If-Range': `"${file.hash}"` }).expect(206);
      expect(current.body.toString()).toBe('2345');
    });

    it('answers 304 without bytes to an If-None-Match that names its contents (before any Range); another tag gets them', async () => {
      const tag = `"${file.hash}"`;
      const cases: Record<string, string>[] = [{ 'If-None-Match': tag }, { 'If-None-Match': `W/${tag}` }, { 'If-None-Match': `"other", ${tag}` }, { 'If-None-Match': '*' }, { 'If-None-Match': tag, Range: 'bytes=2-5' }];
      for (const headers of cases) {
        const res = await download(headers);
        expect({ headers, status: res.status, length: res.body.length, etag: res.headers.etag, cache: res.headers['cache-control'] }).toEqual({ headers, status: 304, length: 0, etag: tag, cache: 'private, no-cache' });
      }
      const other = await download({ 'If-None-Match': '"other"' }).expect(200);
      expect(other.body.toString()).toBe(TEXT);
    });

    it('refuses every range of an empty file with 416', async () => {
      const empty = (await t.post(`${base}/File`, { name: 'empty.txt', fileContents: 'data:text/plain;base64,' }).expect(200)).body;
      expect((await t.get(`${base}/File/${empty.id}/download`).set('Range', 'bytes=0-').expect(416)).headers['content-range']).toBe('bytes */0');
      await t.get(`${base}/File/${empty.id}/download`).expect(200);
    });

    it('answers 404 in JSON when the contents are missing from storage, whole or in part', async () => {
      const before = new Set(listFiles(t.storageDir));
      const lost = (await t.post(`${base}/File`, { name: 'lost.txt', fileContents: dataUrl('lost', 'text/plain') }).expect(200)).body;
      for (const name of listFiles(t.storageDir).filter((n) => !before.has(n))) fs.rmSync(path.join(t.storageDir, name));
      for (const range of [undefined, 'bytes=0-1']) {
        const request = t.get(`${base}/File/${lost.id}/download`);
        const res = await (range ? request.set('Range', range) : request).expect(404).expect('Content-Type', /json/);
        expect(res.body.error).toMatchObject({ code: 'CORE_NOT_FOUND', message: 'The contents of this file are missing from storage' });
      }
      await t.get(`${base}/File/${file.id}/download`).expect(200);
    });
  });
});
