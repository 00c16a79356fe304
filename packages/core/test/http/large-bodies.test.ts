import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const MiB = 1024 * 1024;

interface EarlyAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { error?: { code?: string } };
}

/**
 * Announces a JSON body of `length` bytes, sends only its first KiB and waits for the answer: one
 * that comes proves the server answered without reading (or waiting for) the rest.
 */
function answerBeforeBody(port: number, { path, headers, length }: { path: string; headers: Record<string, string>; length: number }): Promise<EarlyAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers: { 'Content-Type': 'application/json', 'Content-Length': String(length), ...headers } });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer to ${path} while the body was not sent`));
    }, 3000);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode as number, headers: res.headers, body: JSON.parse(text) });
      });
    });
    // The server may close the connection while the client still means to send: expected here.
    req.on('error', () => undefined);
    req.write(`[${' '.repeat(1023)}`);
  });
}

/** A body over 1 MiB is read only for a caller with credentials (401 before it is read otherwise). */
describe.each(TEST_DBS)('large bodies on %s', (kind) => {
  let t: TestApi;
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('answers 401 to a large body without valid credentials before reading it, and closes the connection', async () => {
      const callers: Record<string, string>[] = [{}, { 'Authorization-Token': 'not-a-token' }, { Authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` }, { Cookie: 'er_session=not-a-token', 'X-Requested-With': 'XMLHttpRequest' }];
      for (const path of [`${base}/Product`, `${base}/upsert`, `${base}/File`, `${base}/entityMassUpdate`]) {
        for (const headers of callers) {
          const res = await answerBeforeBody(port, { path, headers, length: 8 * MiB });
          expect([path, res.status, res.body.error?.code, res.headers.connection]).toEqual([path, 401, 'CORE_UNAUTHORIZED', 'close']);
        }
      }
    });

    it('answers 413 to a cookie sign-in body over 1 MiB before reading it (a sign-in has no credentials to ask for), and signs in with a small one', async () => {
      const sessions = base === '/api' ? ['/api/userSession'] : ['/api/v1/userSession', '/api/v1/App/user'];
      for (const session of sessions) {
        const res = await answerBeforeBody(port, { path: `${session}/cookie`, headers: {}, length: 2 * MiB });
        expect([session, res.status, res.body.error?.code, res.headers.connection]).toEqual([session, 413, 'CORE_PAYLOAD_TOO_LARGE', 'close']);
        const small = await fetch(`http://127.0.0.1:${port}${session}/cookie`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ userName: 'nobody', password: 'x'.repeat(1000) }) });
        expect([session, small.status]).toEqual([session, 401]);
      }
    });

    it('reads a large body of a caller with a valid token as before, and a small one without credentials is still 401', async () => {
      const tag = `large-${kind}-${base.length}-${Date.now()}`;
      const items = Array.from({ length: 40 }, (_, i) => ({ entity: 'Product', payload: { name: `${tag}-${i}`, description: 'x'.repeat(40_000) } }));
      const body = JSON.stringify(items);
      expect(body.length).toBeGreaterThan(1.5 * MiB);
      const stored = await t.post(`${base}/upsert`, items).expect(200);
      expect(stored.body.map((r: { status: string }) => r.status)).toEqual(Array(40).fill('Created'));
      const anonymous = await fetch(`http://127.0.0.1:${port}${base}/upsert`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([{ entity: 'Product', payload: { name: tag } }]) });
      expect([anonymous.status, ((await anonymous.json()) as EarlyAnswer['body']).error?.code]).toEqual([401, 'CORE_UNAUTHORIZED']);
      expect((await t.get(`${base}/Product?totalOnly=true&where[0][type]=startsWith&where[0][attribute]=name&where[0][value]=${tag}`).expect(200)).body.total).toBe(40);
    });
  });
});
