import http from 'node:http';
import net from 'node:net';
import express from 'express';
import request from 'supertest';
import { bornWithAppPrototypes, createHttpServer } from '@entity-records/core';
import { ADMIN, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { listenOnLoopback, type LoopbackServer } from '../../../../test/support/loopback';

/** Sends raw bytes and gives what came back once the server closes the connection. */
function raw(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** The base URL of `server` listening on loopback; closed by `servers`' owner. */
async function listening(server: http.Server, servers: LoopbackServer[]): Promise<string> {
  const listened = await listenOnLoopback(server);
  servers.push(listened);
  return `http://127.0.0.1:${listened.port}`;
}

describe.each(TEST_DBS)('createHttpServer: an Express host served with its prototypes from birth, on %s', (kind) => {
  let t: TestApi;
  const servers: LoopbackServer[] = [];
  /** Whether each request and response had the app's prototypes before Express took them. */
  const bornWithThem: boolean[] = [];

  function serve(app: express.Express, options?: http.ServerOptions): Promise<string> {
    const server = createHttpServer(app, options);
    server.prependListener('request', (req, res) => bornWithThem.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response));
    return listening(server, servers);
  }

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(async () => {
    for (const server of servers) server.close();
    await t.close();
  });

  it('serves the API and the host routes, with the app prototypes Express would have given', async () => {
    const app = express();
    (app.request as unknown as { hostThing: string }).hostThing = 'from the host';
    app.get('/host', (req, res) => {
      res.locals.seen = true;
      res.json({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
        app: req.app === app && res.app === app,
        locals: res.locals.seen,
        hostThing: (req as unknown as { hostThing: string }).hostThing,
        incoming: req instanceof http.IncomingMessage && res instanceof http.ServerResponse,
      });
    });
    app.use(t.api.router);
    const base = await serve(app);
    expect((await request(base).get('/host').expect(200)).body).toEqual({ request: true, response: true, app: true, locals: true, hostThing: 'from the host', incoming: true });

    // A sign-in through the born server itself.
    const token = (await request(base).get('/api/userSession').auth(ADMIN.userName, ADMIN.password).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken as string;
    const created = await request(base).post('/api/v1/Brand').set('Authorization-Token', token).send({ name: `Born ${kind}` }).expect(200);
    const read = await request(base).get(`/api/Brand/${created.body.id}`).set('Authorization-Token', token).expect(200);
    expect(read.body.name).toBe(`Born ${kind}`);
    expect(read.headers.etag).toBe(created.headers.etag);
    const bad = await request(base).post('/api/Brand').set('Authorization-Token', token).set('Content-Type', 'application/json').send('{"name":');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('CORE_INVALID_JSON');
    expect(bornWithThem).toEqual([true, true, true, true, true]);
  });

  it("answers what Node's parser refuses with the API's JSON errors, and keeps Node's options", async () => {
    const base = await serve(express().use(t.api.router), { maxHeaderSize: 2048 });
    const malformed = await raw(base, 'BREW /api/Brand HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4)).error.code).toBe('CORE_MALFORMED_REQUEST');
    const tooLarge = await raw(base, `GET /api/Brand HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(4096)}\r\n\r\n`);
    expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(tooLarge.slice(tooLarge.indexOf('\r\n\r\n') + 4)).error.code).toBe('CORE_HEADERS_TOO_LARGE');
    // HTTP/1.1 without Host (Node would send an empty 400 itself), on every path; HTTP/1.0 needs none.
    for (const path of ['/api/Brand', '/api/v1/Brand', '/apidocs/openapi.json', '/nowhere']) {
      for (const host of ['', 'Host: \r\n']) {
        const hostless = await raw(base, `GET ${path} HTTP/1.1\r\n${host}\r\n`);
        const [head, body] = [hostless.slice(0, hostless.indexOf('\r\n\r\n')), hostless.slice(hostless.indexOf('\r\n\r\n') + 4)];
        expect(head).toMatch(/^HTTP\/1\.1 400 /);
        expect(head).toMatch(/^content-type: application\/json/im);
        expect(head).toMatch(/^x-status-reason: An HTTP\/1\.1 request must carry a Host header$/im);
        expect(JSON.parse(body).error).toEqual({ code: 'CORE_MALFORMED_REQUEST', message: 'An HTTP/1.1 request must carry a Host header', details: {} });
      }
    }
    expect(await raw(base, 'GET /api/Brand HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 401 /);
    expect(await raw(base, 'GET /api/Brand HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 401 /);
  });

  it("keeps a host's own response class", async () => {
    let made = 0;
    class HostResponse extends http.ServerResponse {
      constructor(req: http.IncomingMessage) {
        super(req);
        made++;
      }
    }
    const app = express().use(t.api.router);
    const base = await serve(app, { ServerResponse: HostResponse as typeof http.ServerResponse });
    await request(base).get('/api/Brand').expect(401);
    expect(made).toBe(1);
  });
});

describe('bornWithAppPrototypes', () => {
  it("gives Node's classes made to give their objects the app's prototypes, the same each time", () => {
    const app = express();
    const options = bornWithAppPrototypes(app);
    expect(options.IncomingMessage?.prototype).toBe(app.request);
    expect(options.ServerResponse?.prototype).toBe(app.response);
    expect(new (options.IncomingMessage as typeof http.IncomingMessage)(new net.Socket())).toBeInstanceOf(http.IncomingMessage);
    expect(bornWithAppPrototypes(app)).toBe(options);
    expect(app.request).toBe(options.IncomingMessage?.prototype);
  });

  it('keeps what the host put on app.request and app.response, before and after', async () => {
    const app = express();
    (app.request as unknown as Record<string, unknown>).before = 'before';
    (app.response as unknown as Record<string, unknown>).shown = function shown(this: express.Response) {
      this.json({ before: (this.req as unknown as Record<string, unknown>).before, after: (this.req as unknown as Record<string, unknown>).after });
    };
    const server = createHttpServer(app);
    const servers: LoopbackServer[] = [];
    (app.request as unknown as Record<string, unknown>).after = 'after';
    app.get('/', (req, res) => {
      expect(req.constructor).toBe(http.IncomingMessage);
      expect(res.constructor).toBe(http.ServerResponse);
      (res as unknown as { shown(): void }).shown();
    });
    try {
      const base = await listening(server, servers);
      expect((await request(base).get('/').expect(200)).body).toEqual({ before: 'before', after: 'after' });
    } finally {
      servers[0]?.close();
    }
  });
});
