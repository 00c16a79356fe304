import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupFunction } from 'node:net';
import { isForbiddenAddress, redirectTarget } from '@entity-records/files';
import { GENERATIONS } from '../support/api';
import { TEST_DBS } from '../support/databases';
import { binary, listFiles, startFilesApi, type FilesTestApi } from '../../packages/files/test/helpers';

/**
 * The URL method must never reach this host's or a private network's services. These tests only
 * ever send traffic to 127.0.0.1: refusals use loopback forms and a stubbed name resolution that
 * answers loopback addresses; private ranges are checked on the address classifier alone.
 */

/** A file server on 127.0.0.1 that counts the requests it gets. */
async function fileServer() {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const port = (server.address() as AddressInfo).port;
    const url = req.url ?? '/';
    const redirect = /^\/r(\d+)$/.exec(url);
    if (redirect) {
      const n = Number(redirect[1]);
      res.writeHead(302, { Location: n > 1 ? `/r${n - 1}` : '/file.txt' }).end();
    } else if (url === '/file.txt') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('from the url');
    } else if (url === '/to-localhost') {
      res.writeHead(301, { Location: `http://localhost:${port}/file.txt` }).end();
    } else if (url === '/to-127-0-0-2') {
      res.writeHead(307, { Location: `http://127.0.0.2:${port}/file.txt` }).end();
    } else if (url === '/to-ftp') {
      res.writeHead(302, { Location: 'ftp://127.0.0.1/file.txt' }).end();
    } else if (url === '/big') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(1000));
      res.end();
    } else if (url === '/big-length') {
      res.writeHead(200, { 'Content-Length': '5000000' }).write(Buffer.alloc(10));
    } else if (url === '/stall') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).write('partial');
    } else if (url === '/unframed') {
      // No Content-Length, no chunked encoding: the body ends where the connection ends, so a
      // download cut off by the time limit would look complete. Written by hand: Node frames bodies.
      req.socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\npartial contents, more would follow');
    } else if (url === '/unframed-big') {
      req.socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n');
      req.socket.end(Buffer.alloc(20_000));
    } else if (url === '/short-length') {
      // Announces 1,000 bytes, sends 10, then closes the connection: the body ends early.
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '1000' });
      res.write('ten bytes.', () => setTimeout(() => req.socket.destroy(), 20));
    } else if (url === '/silent') {
      // never answers
    } else {
      res.writeHead(404).end('missing');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    hits,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Names resolved to loopback addresses, as a hostile DNS answer might; nothing else resolves. */
const STUB: Record<string, { address: string; family: number }[]> = {
  'loopback.example': [{ address: '127.0.0.1', family: 4 }],
  'other-loopback.example': [{ address: '127.9.9.9', family: 4 }],
  'v6.example': [{ address: '::1', family: 6 }],
  'mapped.example': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'zero.example': [{ address: '0.0.0.0', family: 4 }],
  'mixed.example': [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }],
};
const stubLookup: LookupFunction = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  const found = STUB[hostname];
  if (!found) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  if (options.all) return callback(null, found);
  return callback(null, found[0].address, found[0].family);
}) as LookupFunction;

describe('the address classifier', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '0.0.0.0', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '224.0.0.251', '239.255.255.250', '255.255.255.255', '240.0.0.1', '::', '::1', 'fe80::1', 'fe80::1%eth0', 'fc00::1',
    'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::a00:1',
    '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '64:ff9b:1::7f00:1', '64:ff9b:1:abcd::a00:1',
    '2002:c0a8:101::1', '::127.0.0.1', 'not-an-address',
  ])('refuses %s', (address) => expect(isForbiddenAddress(address)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '::ffff:0:808:808'])('allows %s', (address) =>
    expect(isForbiddenAddress(address)).toBe(false),
  );
});

describe('redirect targets', () => {
  it('refuses https to http and schemes other than http and https', () => {
    expect(() => redirectTarget(new URL('https://a.example/x'), 'http://a.example/y')).toThrow(/https to http/);
    expect(() => redirectTarget(new URL('http://a.example/x'), 'file:///etc/passwd')).toThrow(/not an http or https URL/);
    expect(() => redirectTarget(new URL('http://a.example/x'), 'http://[bad')).toThrow(/not an http or https URL/);
    expect(redirectTarget(new URL('http://a.example/x'), 'https://b.example/y').href).toBe('https://b.example/y');
    expect(redirectTarget(new URL('https://a.example/x/y'), '../z').href).toBe('https://a.example/z');
  });
});

describe.each(TEST_DBS)('URL uploads on %s', (kind) => {
  let server: Awaited<ReturnType<typeof fileServer>>;
  let guarded: FilesTestApi;
  let allowing: FilesTestApi;
  beforeAll(async () => {
    server = await fileServer();
    guarded = await startFilesApi(kind, { urlLookup: stubLookup, urlTimeoutMs: 1500 });
    allowing = await startFilesApi(kind, { fileUrlAllowedHosts: ['127.0.0.1'], urlLookup: stubLookup, urlTimeoutMs: 1500, maxFileSize: 10_000 });
  });
  afterAll(async () => {
    await guarded.close();
    await allowing.close();
    await server.close();
  });

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    const upload = (t: FilesTestApi, url: string) => t.post(`${base}/File`, { name: 'from-url.txt', url });

    it('refuses loopback hosts in every spelling, never connecting', async () => {
      const p = server.port;
      const urls = [
        `http://127.0.0.1:${p}/file.txt`, `http://localhost:${p}/file.txt`, `http://[::1]:${p}/file.txt`, `http://127.0.0.2:${p}/file.txt`,
        `http://0.0.0.0:${p}/file.txt`, `http://2130706433:${p}/file.txt`, `http://0x7f.1:${p}/file.txt`, `http://0x7f000001:${p}/file.txt`,
        `http://017700000001:${p}/file.txt`, `http://127.1:${p}/file.txt`, `http://[::ffff:127.0.0.1]:${p}/file.txt`, `http://[::ffff:7f00:1]:${p}/file.txt`,
        `http://[::ffff:0:7f00:1]:${p}/file.txt`,
        `http://[0:0:0:0:0:0:0:1]:${p}/file.txt`, `http://LOCALHOST.:${p}/file.txt`,
      ];
      const before = server.hits.length;
      for (const url of urls) {
        const res = await upload(guarded, url).expect(400);
        expect({ url, code: res.body.error.code }).toEqual({ url, code: 'FILES_URL_REFUSED' });
      }
      expect(server.hits.length).toBe(before);
    });

    it('checks the address a name resolves to when connecting (stubbed resolution)', async () => {
      const before = server.hits.length;
      for (const host of ['loopback.example', 'other-loopback.example', 'v6.example', 'mapped.example', 'zero.example', 'mixed.example']) {
        const res = await upload(guarded, `http://${host}:${server.port}/file.txt`).expect(400);
        expect({ host, code: res.body.error.code }).toEqual({ host, code: 'FILES_URL_REFUSED' });
      }
      expect((await upload(guarded, `http://unknown.example:${server.port}/file.txt`).expect(400)).body.error.code).toBe('FILES_URL_FETCH_FAILED');
      expect(server.hits.length).toBe(before);
    });

    it('refuses schemes other than http and https', async () => {
      for (const url of ['ftp://127.0.0.1/file.txt', 'file:///etc/passwd', 'data:text/plain;base64,YQ==', 'javascript:alert(1)', 'gopher://127.0.0.1/', 'not a url', '//127.0.0.1/x']) {
        const res = await upload(guarded, url).expect(400);
        expect({ url, code: res.body.error.code }).toEqual({ url, code: 'FILES_URL_REFUSED' });
      }
    });

    it('downloads from an allowed host, with the answer`s media type', async () => {
      const res = await upload(allowing, `http://127.0.0.1:${server.port}/file.txt`).expect(200);
      expect(res.body).toMatchObject({ name: 'from-url.txt', mimeType: 'text/plain', fileSize: 12 });
      const down = await allowing.get(`${base}/File/${res.body.id}/download`).buffer(true).parse(binary).expect(200);
      expect(down.body.toString()).toBe('from the url');
    });

    it('follows up to 3 redirects, checking each again', async () => {
      expect((await upload(allowing, `http://127.0.0.1:${server.port}/r3`).expect(200)).body.fileSize).toBe(12);
      expect((await upload(allowing, `http://127.0.0.1:${server.port}/r4`).expect(400)).body.error.code).toBe('FILES_URL_FETCH_FAILED');
      const before = server.hits.length;
      for (const path of ['/to-localhost', '/to-127-0-0-2', '/to-ftp']) {
        const res = await upload(allowing, `http://127.0.0.1:${server.port}${path}`).expect(400);
        expect({ path, code: res.body.error.code }).toEqual({ path, code: 'FILES_URL_REFUSED' });
      }
      // only the redirecting requests themselves reached the server
      expect(server.hits.slice(before)).toEqual(['/to-localhost', '/to-127-0-0-2', '/to-ftp']);
    });

    it('refuses an announced size over the limit (413); a download the size or time limit cuts short is 400 and stores nothing', async () => {
      const files = async () => (await allowing.get(`${base}/File?totalOnly=true`).expect(200)).body.total;
      const before = { files: await files(), stored: listFiles(allowing.storageDir) };
      expect((await upload(allowing, `http://127.0.0.1:${server.port}/big-length`).expect(413)).body.error.code).toBe('FILES_TOO_LARGE');
      for (const path of ['/big', '/unframed-big']) {
        const res = await upload(allowing, `http://127.0.0.1:${server.port}${path}`).expect(400);
        expect({ path, error: res.body.error }).toEqual({ path, error: expect.objectContaining({ code: 'FILES_URL_FETCH_FAILED', details: { maxFileSize: 10_000 } }) });
      }
      for (const path of ['/stall', '/silent', '/unframed']) {
        const res = await upload(allowing, `http://127.0.0.1:${server.port}${path}`).expect(400);
        expect({ path, code: res.body.error.code }).toEqual({ path, code: 'FILES_URL_FETCH_FAILED' });
      }
      expect(await files()).toBe(before.files);
      expect(listFiles(allowing.storageDir)).toEqual(before.stored);
    });

    it('refuses a download that ends before the Content-Length it announced (400) and stores nothing', async () => {
      const files = async () => (await allowing.get(`${base}/File?totalOnly=true`).expect(200)).body.total;
      const before = { files: await files(), stored: listFiles(allowing.storageDir), hits: server.hits.length };
      const res = await upload(allowing, `http://127.0.0.1:${server.port}/short-length`).expect(400);
      expect(res.body.error).toMatchObject({ code: 'FILES_URL_FETCH_FAILED', message: 'The download from url broke off or took longer than 1500 ms' });
      // The source was reached: the refusal is for the broken-off body, not for the address.
      expect(server.hits.slice(before.hits)).toEqual(['/short-length']);
      expect(await files()).toBe(before.files);
      expect(listFiles(allowing.storageDir)).toEqual(before.stored);
    });

    it('never fetches for a body the create refuses: unknown or mistyped fields, no name, a malformed or taken id', async () => {
      const taken = (await allowing.post(`${base}/File`, { name: 'taken.txt', fileContents: 'data:text/plain;base64,YQ==' }).expect(200)).body.id;
      const url = `http://127.0.0.1:${server.port}/file.txt`;
      const before = { hits: server.hits.length, files: (await allowing.get(`${base}/File?totalOnly=true`).expect(200)).body.total, stored: listFiles(allowing.storageDir) };
      const cases: [Record<string, unknown>, number, string][] = [
        [{ name: 'a.txt', url, colour: 'red' }, 400, 'CORE_UNKNOWN_FIELD'],
        [{ name: 5, url }, 400, 'CORE_VALIDATION_FAILED'],
        [{ url }, 400, 'CORE_VALIDATION_FAILED'],
        [{ name: null, url }, 400, 'CORE_VALIDATION_FAILED'],
        [{ id: 'not valid!', name: 'a.txt', url }, 400, 'CORE_INVALID_ID'],
        [{ id: taken, name: 'a.txt', url }, 409, 'CORE_UNIQUE_VIOLATION'],
      ];
      for (const [body, status, code] of cases) {
        const res = await allowing.post(`${base}/File`, body);
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status, code });
      }
      expect(server.hits.length).toBe(before.hits);
      expect((await allowing.get(`${base}/File?totalOnly=true`).expect(200)).body.total).toBe(before.files);
      expect(listFiles(allowing.storageDir)).toEqual(before.stored);
    });

    it('answers errors of the remote server', async () => {
      const missing = await upload(allowing, `http://127.0.0.1:${server.port}/missing`).expect(400);
      expect(missing.body.error).toMatchObject({ code: 'FILES_URL_FETCH_FAILED', details: { status: 404 } });
    });
  });
});
