import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { dataUrl, startFilesApi, type FilesTestApi } from './helpers';

jest.setTimeout(60_000);

/** A JSON body sent in two halves: the request is in flight until `finish()`. */
function halfSent(port: number, { path, token, body }: { path: string; token: string; body: string }) {
  const bytes = Buffer.from(body);
  const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'Authorization-Token': token, 'Content-Type': 'application/json', 'Content-Length': String(bytes.length) } });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
  });
  req.write(bytes.subarray(0, bytes.length >> 1));
  return { answer, finish: () => req.end(bytes.subarray(bytes.length >> 1)) };
}

/**
 * CONTRACT §17 (parallel base64 and URL imports): large bodies are read a few at a time and URL
 * imports download a few at a time; past the queue, 503 CORE_BUSY with Retry-After.
 */
describe.each(TEST_DBS)('limits of imports on %s', (kind) => {
  let t: FilesTestApi;
  let server: http.Server;
  let source: http.Server;
  const stalled: http.ServerResponse[] = [];
  beforeAll(async () => {
    source = http.createServer((req, res) => {
      if (req.url === '/slow') {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '4' }).write('sl');
        stalled.push(res);
      } else res.writeHead(200, { 'Content-Type': 'text/plain' }).end('quick');
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    t = await startFilesApi(kind, { fileUrlAllowedHosts: ['127.0.0.1'], maxConcurrentUrlImports: 1, urlImportQueue: 0 }, { maxConcurrentLargeBodies: 1, largeBodyQueue: 0 });
    server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    source.closeAllConnections();
    source.close();
    await t.close();
  });

  const port = () => (server.address() as AddressInfo).port;
  const busy = (res: request.Response, message: string) => {
    expect({ status: res.status, error: res.body.error, retry: res.headers['retry-after'] }).toEqual({ status: 503, error: { code: 'CORE_BUSY', message, details: {} }, retry: '1' });
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('reads one large body at a time here (maxConcurrentLargeBodies 1, no queue), small ones at any time', async () => {
      const big = (name: string) => JSON.stringify({ name, fileContents: dataUrl(Buffer.alloc(1536 * 1024, 5)) });
      const first = halfSent(port(), { path: `${base}/File`, token: t.token, body: big('first.bin') });
      await new Promise((resolve) => setTimeout(resolve, 200));
      busy(await request(server).post(`${base}/File`).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send(big('second.bin')), 'Too many large bodies at once; try again shortly');
      await t.post(`${base}/File`, { name: 'small.txt', fileContents: dataUrl('small') }).expect(200);
      first.finish();
      const answer = await first.answer;
      expect({ status: answer.status, name: JSON.parse(answer.body).name }).toEqual({ status: 200, name: 'first.bin' });
      await request(server).post(`${base}/File`).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send(big('second.bin')).expect(200);
    });

    it('downloads one URL import at a time here (maxConcurrentUrlImports 1, no queue)', async () => {
      const url = (path: string) => `http://127.0.0.1:${(source.address() as AddressInfo).port}${path}`;
      const slow = t.post(`${base}/File`, { name: 'slow.txt', url: url('/slow') }).then((res) => res);
      for (let i = 0; i < 200 && stalled.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      busy(await t.post(`${base}/File`, { name: 'quick.txt', url: url('/quick') }), 'Too many URL imports at once; try again shortly');
      (stalled.shift() as http.ServerResponse).end('ow');
      expect((await slow).body).toMatchObject({ name: 'slow.txt', fileSize: 4 });
      expect((await t.post(`${base}/File`, { name: 'quick.txt', url: url('/quick') }).expect(200)).body.fileSize).toBe(5);
    });
  });
});
