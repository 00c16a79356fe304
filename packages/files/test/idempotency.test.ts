import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { dataUrl, listFiles, multipartBody, startFilesApi, type FilesTestApi } from './helpers';

/** `Idempotency-Key` on the uploads: base64, URL, chunks and multipart (CONTRACT §16). */
describe.each(TEST_DBS)('idempotent uploads on %s', (kind) => {
  let t: FilesTestApi;
  let source: http.Server;
  let fetches = 0;
  let keys = 0;
  const newKey = () => `file-${kind}-${(keys += 1)}-${Date.now()}`;

  beforeAll(async () => {
    source = http.createServer((_req, res) => {
      fetches += 1;
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`fetched ${fetches}`);
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    t = await startFilesApi(kind, { fileUrlAllowedHosts: ['127.0.0.1'] });
  });
  afterAll(async () => {
    source.closeAllConnections();
    source.close();
    await t.close();
  });

  const objects = () => listFiles(t.storageDir).filter((f) => f.startsWith('files/')).length;
  const fileCount = async () => (await t.get('/api/File?totalOnly=true').expect(200)).body.total as number;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('replays a base64 upload and stores nothing more; another body with the key is 422', async () => {
      const key = newKey();
      const body = { name: 'once.txt', fileContents: dataUrl('once', 'text/plain') };
      const first = await t.post(`${base}/File`, body).set('Idempotency-Key', key).expect(200);
      const [files, stored] = [await fileCount(), objects()];
      const again = await t.post(`${base}/File`, body).set('Idempotency-Key', key).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect([await fileCount(), objects()]).toEqual([files, stored]);
      const other = await t.post(`${base}/File`, { ...body, fileContents: dataUrl('twice', 'text/plain') }).set('Idempotency-Key', key).expect(422);
      expect(other.body.error.code).toBe('CORE_IDEMPOTENCY_MISMATCH');
      expect([await fileCount(), objects()]).toEqual([files, stored]);
    });

    it('replays a URL import without fetching the URL again', async () => {
      const key = newKey();
      const body = { name: 'fetched.txt', url: `http://127.0.0.1:${(source.address() as AddressInfo).port}/x.txt` };
      const first = await t.post(`${base}/File`, body).set('Idempotency-Key', key).expect(200);
      const seen = fetches;
      const files = await fileCount();
      const again = await t.post(`${base}/File`, body).set('Idempotency-Key', key).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(fetches).toBe(seen);
      expect(await fileCount()).toBe(files);
    });

    it('replays a multipart upload of the same parts (another boundary) and keeps nothing of the repeat; other contents are 422', async () => {
      const key = newKey();
      const send = (contents: string) => {
        const { body, contentType } = multipartBody([
          { name: 'name', value: 'parts.txt' },
          { name: 'file', filename: 'p.txt', type: 'text/plain', value: contents },
        ]);
        return t.post(`${base}/File/upload`).set('Content-Type', contentType).set('Idempotency-Key', key).send(body);
      };
      const first = await send('multipart contents').expect(200);
      expect(first.body).toMatchObject({ name: 'parts.txt', fileSize: 18 });
      const [files, stored] = [await fileCount(), objects()];
      const again = await send('multipart contents').expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      const other = await send('other contents').expect(422);
      expect(other.body.error.code).toBe('CORE_IDEMPOTENCY_MISMATCH');
      expect([await fileCount(), objects()]).toEqual([files, stored]);
      // A malformed key is refused before the body is read.
      const { body, contentType } = multipartBody([{ name: 'file', filename: 'p.txt', value: 'x' }]);
      await t.post(`${base}/File/upload`).set('Content-Type', contentType).set('Idempotency-Key', 'x'.repeat(300)).send(body).expect(400);
      expect([await fileCount(), objects()]).toEqual([files, stored]);
    });

    it('replays a chunk answer', async () => {
      const key = newKey();
      const chunk = { id: `idem-chunk-${key}`.slice(0, 64), name: 'chunked.bin', fileUniqueHash: key, piecesCount: 1, start: 0, piece: dataUrl('one chunk') };
      const first = await t.post(`${base}/File/createChunk`, chunk).set('Idempotency-Key', key).expect(200);
      expect(first.body).toMatchObject({ chunks: ['0'], name: 'chunked.bin' });
      const again = await t.post(`${base}/File/createChunk`, chunk).set('Idempotency-Key', key).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
    });
  });
});
