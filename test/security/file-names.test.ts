import fs from 'node:fs';
import path from 'node:path';
import { GENERATIONS } from '../support/api';
import { TEST_DBS } from '../support/databases';
import { dataUrl, listFiles, multipartBody, startFilesApi, type FilesTestApi } from '../../packages/files/test/helpers';

/** Names that could mean a path, or break a header or a log line. */
const HOSTILE = [
  '../escape.txt', '..', '.', 'a/../../b.txt', '/etc/passwd', 'dir/file.txt', '..\\escape.txt', 'C:\\Windows\\x.txt', 'a\\b.txt',
  'nul\u0000.txt', 'cr\r.txt', 'lf\n.txt', 'crlf\r\nSet-Cookie: x=1', 'tab\t.txt', 'del\u007f.txt', 'x'.repeat(256),
];

describe.each(TEST_DBS)('file names on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind);
  });
  afterAll(() => t.close());

  const outside = () => fs.readdirSync(path.dirname(t.storageDir)).filter((f) => f.includes('escape'));

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it.each(HOSTILE)('refuses %j in every upload method and in updates', async (name) => {
      const expectRefused = (res: { status: number; body: { error?: { code: string } } }) => {
        expect({ name, status: res.status }).toEqual({ name, status: 400 });
        expect(['FILES_NAME_INVALID', 'CORE_VALIDATION_FAILED']).toContain(res.body.error?.code);
      };
      expectRefused(await t.post(`${base}/File`, { name, fileContents: dataUrl('x') }));
      expectRefused(await t.post(`${base}/File`, { id: `n${g}`, name, fileUniqueHash: `n-${g}`, start: 0, piecesCount: 1, piece: dataUrl('x') }));
      // A control character in a part header is refused by the multipart parser already (400 too).
      // eslint-disable-next-line no-control-regex
      if (!/[\u0000-\u001f\u007f]/.test(name)) {
        const { body, contentType } = multipartBody([{ name: 'file', filename: name, type: 'text/plain', value: 'x' }]);
        expectRefused(await t.post(`${base}/File/upload`).set('Content-Type', contentType).send(body));
      }
      const { body, contentType } = multipartBody([{ name: 'name', value: name }, { name: 'file', filename: 'ok.txt', value: 'x' }]);
      expectRefused(await t.post(`${base}/File/upload`).set('Content-Type', contentType).send(body));
      const file = (await t.post(`${base}/File`, { name: 'ok.txt', fileContents: dataUrl('x') }).expect(200)).body;
      expectRefused(await t.patch(`${base}/File/${file.id}`, { name }));
      expect((await t.get(`${base}/File/${file.id}`).expect(200)).body.name).toBe('ok.txt');
    });

    it('stores contents under keys of its own, never the client name', async () => {
      const name = 'report 2024 (final).pdf';
      await t.post(`${base}/File`, { name, fileContents: dataUrl('pdf') }).expect(200);
      const stored = listFiles(t.storageDir);
      expect(stored.length).toBeGreaterThan(0);
      for (const key of stored) expect(key).toMatch(/^(files|thumbs|chunks)\/[0-9a-f/]+[0-9a-f.a-z-]*$/);
      expect(outside()).toEqual([]);
    });
  });
});
