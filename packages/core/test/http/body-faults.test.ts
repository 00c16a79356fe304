import net from 'node:net';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { serveOnLoopback, type LoopbackServer } from '../../../../test/support/loopback';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/** Writes raw bytes on a new connection; resolves with what came back before the connection closed. */
function rawExchange(port: number, { bytes, hangUp }: { bytes: Buffer; hangUp: 'abort' | 'half-close' | 'wait' }): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
    socket.write(bytes, () => {
      if (hangUp === 'abort') setTimeout(() => socket.destroy(), 50);
      if (hangUp === 'half-close') socket.end();
      if (hangUp === 'wait') setTimeout(() => socket.destroy(), 1500);
    });
  });
}

/**
 * Bodies that are not what they claim (CONTRACT §2, §17): an unknown charset or encoding, a
 * compressed body that inflates past the limit, a body cut off or longer than announced. Each is
 * a 4xx or no answer at all, never a 500, and stores nothing.
 */
describe.each(TEST_DBS)('bodies that lie on %s', (kind) => {
  let t: TestApi;
  let server: LoopbackServer;
  const errors: string[] = [];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, logger: { info() {}, warn() {}, error: (facts: unknown, message?: string) => void errors.push(message ?? String(facts)) } });
    server = await serveOnLoopback(t.app);
  });
  afterAll(async () => {
    server.close();
    await t.close();
  });
  afterEach(() => expect(errors.splice(0)).toEqual([]));

  const brands = async () => (await t.get('/api/Brand?totalOnly=true').expect(200)).body.total as number;
  const port = () => server.port;
  const head = (path: string, headers: Record<string, string | number>) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization-Token: ${t.token}\r\nContent-Type: application/json\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('refuses charset=bogus and an unknown Content-Encoding with 415', async () => {
      const before = await brands();
      const send = (contentType: string, encoding?: string) => {
        const req = request(t.server).post(`${base}/Brand`).set('Authorization-Token', t.token).set('Content-Type', contentType);
        return (encoding ? req.set('Content-Encoding', encoding) : req).send(`{"name":"bogus ${base}"}`);
      };
      for (const res of [await send('application/json; charset=bogus'), await send('application/json; charset=latin-1'), await send('application/json', 'bogus'), await send('application/json', 'compress')]) {
        expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 415, code: 'CORE_UNSUPPORTED_MEDIA_TYPE' });
      }
      expect(await brands()).toBe(before);
    });

    it('stops inflating a gzip bomb at the body limit (413)', async () => {
      // 100 MB of spaces inside a string: about 100 KB compressed, three times the 32 MB limit inflated.
      const bomb = gzipSync(Buffer.concat([Buffer.from('{"name":"'), Buffer.alloc(100 * 1024 * 1024, 0x20), Buffer.from('"}')]));
      expect(bomb.length).toBeLessThan(200 * 1024);
      const res = await request(t.server)
        .post(`${base}/Brand`)
        .set('Authorization-Token', t.token)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize((body: Buffer) => body as never)
        .send(bomb);
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 413, code: 'CORE_PAYLOAD_TOO_LARGE' });
    });

    it('stores nothing of a body cut off mid-way or shorter than its Content-Length', async () => {
      const before = await brands();
      const body = Buffer.from(`{"name":"cut off ${base}"}`);
      // The client goes away mid-body: no answer to send, nothing stored.
      await rawExchange(port(), { bytes: Buffer.concat([Buffer.from(head(`${base}/Brand`, { 'Content-Length': body.length + 50 })), body.subarray(0, 10)]), hangUp: 'abort' });
      // Announces more than it sends, then closes its side: 400, nothing stored.
      const short = await rawExchange(port(), { bytes: Buffer.concat([Buffer.from(head(`${base}/Brand`, { 'Content-Length': body.length + 50 })), body]), hangUp: 'half-close' });
      expect(short).not.toMatch(/^HTTP\/1\.1 [25]\d\d/);
      // An upsert cut off mid-body stores none of its items.
      const items = Buffer.from(JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ entity: 'Brand', payload: { name: `cut upsert ${base} ${i}` } }))));
      await rawExchange(port(), { bytes: Buffer.concat([Buffer.from(head(`${base}/upsert`, { 'Content-Length': items.length })), items.subarray(0, items.length - 20)]), hangUp: 'abort' });
      expect(await brands()).toBe(before);
    });

    it('reads no more than Content-Length: a body longer than announced is cut there and the rest is no request (400, nothing stored)', async () => {
      const before = await brands();
      const body = Buffer.from(`{"name":"too long ${base}","code":"x"}`);
      const answer = await rawExchange(port(), { bytes: Buffer.concat([Buffer.from(head(`${base}/Brand`, { 'Content-Length': body.length - 12 })), body]), hangUp: 'wait' });
      // The cut body is no JSON; the bytes after it are parsed as a next request, which is none:
      // the connection gets a 400 and is closed.
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(await brands()).toBe(before);
    });
  });
});
