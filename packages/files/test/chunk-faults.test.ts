import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { serveOnLoopback, type LoopbackServer } from '../../../test/support/loopback';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../test/support/users';
import { binary, dataUrl, listFiles, startFilesApi, type FilesTestApi } from './helpers';

const FILE_RIGHTS = { File: { create: true, read: 'own', edit: 'own', delete: 'own' } };

/**
 * Chunked uploads between users and under broken connections (CONTRACT §10, §17): an upload key
 * belongs to its user, a File id taken by someone else is refused, and a chunk whose request
 * breaks mid-piece leaves nothing behind.
 */
describe.each(TEST_DBS)('chunks across users and broken requests on %s', (kind) => {
  let t: FilesTestApi;
  let alice: UserClient;
  let bob: UserClient;
  let server: LoopbackServer;
  beforeAll(async () => {
    t = await startFilesApi(kind);
    alice = await userWithRole(t, { scopes: FILE_RIGHTS });
    bob = await userWithRole(t, { scopes: FILE_RIGHTS });
    server = await serveOnLoopback(t.app);
  });
  afterAll(async () => {
    server.close();
    await t.close();
  });

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    const piece = (user: UserClient, body: { id: string; fileUniqueHash: string; name: string; piecesCount: number; start: number; bytes: Buffer }) =>
      user.post(`${base}/File`, { id: body.id, fileUniqueHash: body.fileUniqueHash, name: body.name, piecesCount: body.piecesCount, start: body.start, piece: dataUrl(body.bytes) });

    it("keeps another user's chunks with the same fileUniqueHash apart: neither sees, completes nor overwrites the other's upload", async () => {
      const hash = `shared-${g}-${kind}-${randomBytes(4).toString('hex')}`;
      const [a, b] = [randomBytes(1000), randomBytes(1000)];
      const first = { fileUniqueHash: hash, name: 'mine.bin', piecesCount: 2 };
      expect((await piece(alice, { ...first, id: `alice-${g}-${kind}`, start: 0, bytes: a.subarray(0, 500) }).expect(200)).body).toEqual({ chunks: ['0'] });
      // Bob's chunk at the same key: his own upload (another id is no conflict), and not Alice's second half.
      expect((await piece(bob, { ...first, id: `bob-${g}-${kind}`, start: 500, bytes: b.subarray(500) }).expect(200)).body).toEqual({ chunks: ['500'] });
      // Bob's bytes at Alice's offset are no overlap with hers.
      expect((await piece(bob, { ...first, id: `bob-${g}-${kind}`, start: 0, bytes: b.subarray(0, 500) }).expect(200)).body).toEqual({
        chunks: ['0', '500'],
        id: `bob-${g}-${kind}`,
        name: 'mine.bin',
      });
      expect((await piece(alice, { ...first, id: `alice-${g}-${kind}`, start: 500, bytes: a.subarray(500) }).expect(200)).body).toMatchObject({ chunks: ['0', '500'], id: `alice-${g}-${kind}` });
      const download = async (user: UserClient, id: string) => (await user.get(`${base}/File/${id}/download`).buffer(true).parse(binary).expect(200)).body as Buffer;
      expect(Buffer.compare(await download(alice, `alice-${g}-${kind}`), a)).toBe(0);
      expect(Buffer.compare(await download(bob, `bob-${g}-${kind}`), b)).toBe(0);
      await bob.get(`${base}/File/alice-${g}-${kind}`).expect(404);
    });

    it('refuses a File id another user has taken (409), by chunks and by base64, and stores nothing', async () => {
      const taken = (await alice.post(`${base}/File`, { id: `taken-${g}-${kind}`, name: 'a.txt', fileContents: dataUrl('alice') }).expect(200)).body.id;
      const before = listFiles(t.storageDir).length;
      const chunk = await piece(bob, { id: taken, fileUniqueHash: `bob-takes-${g}-${kind}`, name: 'b.bin', piecesCount: 1, start: 0, bytes: Buffer.from('bob') });
      const base64 = await bob.post(`${base}/File`, { id: taken, name: 'b.txt', fileContents: dataUrl('bob') });
      for (const res of [chunk, base64]) {
        expect({ status: res.status, error: res.body.error }).toMatchObject({ status: 409, error: { code: 'CORE_UNIQUE_VIOLATION', details: { entity: 'File', fields: ['id'] } } });
      }
      expect(listFiles(t.storageDir).length).toBe(before);
      const mine = await alice.get(`${base}/File/${taken}/download`).buffer(true).parse(binary).expect(200);
      expect(mine.body.toString()).toBe('alice');
    });

    it('records nothing of a chunk whose request breaks mid-piece; the chunk sent again counts once', async () => {
      const u = { id: `broken-${g}-${kind}`, fileUniqueHash: `broken-${g}-${kind}-${randomBytes(4).toString('hex')}`, name: 'broken.bin', piecesCount: 2 };
      const file = randomBytes(4000);
      await piece(alice, { ...u, start: 0, bytes: file.subarray(0, 2000) }).expect(200);
      const before = listFiles(t.storageDir);
      const body = Buffer.from(JSON.stringify({ ...u, start: 2000, piece: dataUrl(file.subarray(2000)) }));
      await new Promise<void>((resolve) => {
        const req = http.request({ host: '127.0.0.1', port: server.port, path: `${base}/File`, method: 'POST', headers: { 'Authorization-Token': alice.token, 'Content-Type': 'application/json', 'Content-Length': String(body.length) } });
        req.on('error', () => resolve());
        req.on('close', () => resolve());
        req.write(body.subarray(0, body.length >> 1), () => setTimeout(() => req.destroy(), 50));
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(listFiles(t.storageDir)).toEqual(before);
      await t.get(`${base}/File/${u.id}`).expect(404);
      const done = (await piece(alice, { ...u, start: 2000, bytes: file.subarray(2000) }).expect(200)).body;
      expect(done).toEqual({ chunks: ['0', '2000'], id: u.id, name: 'broken.bin' });
      const down = await alice.get(`${base}/File/${u.id}/download`).buffer(true).parse(binary).expect(200);
      expect(Buffer.compare(down.body, file)).toBe(0);
    });
  });
});
