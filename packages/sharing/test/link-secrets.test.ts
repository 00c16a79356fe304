import request from 'supertest';
import sharing from '@entity-records/sharing';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole } from '../../../test/support/users';
import { binary, dataUrl, startFilesApi, type FilesTestApi } from '../../files/test/helpers';

/** CONTRACT §17: a share link is a secret the server makes, that dies with its creator's account and leaks through no header. */
describe.each(TEST_DBS)('share links as secrets on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  const upload = async (base: string, name: string) => (await t.post(`${base}/File`, { name, fileContents: dataUrl(`contents of ${name}`, 'text/plain') }).expect(200)).body as { id: string };
  const publicGet = (path: string) => request(t.server).get(path).buffer(true).parse(binary);

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('makes the id itself, 128 random bits url-safe, and refuses one the client chooses (400)', async () => {
      const file = await upload(base, `id-${g}.txt`);
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add((await t.post(`${base}/Sharing`, { fileId: file.id }).expect(200)).body.id);
      expect(ids.size).toBe(5);
      for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      // 22 base64url characters carry 132 bits, of which the last 4 are always zero: 128 random bits.
      expect([...ids].every((id) => Buffer.from(id, 'base64url').length === 16)).toBe(true);

      const before = (await t.get(`${base}/Sharing?totalOnly=true`).expect(200)).body.total;
      const chosen = await t.post(`${base}/Sharing`, { id: `chosen-${g}-${kind}`, fileId: file.id }).expect(400);
      expect(chosen.body.error).toMatchObject({ code: 'CORE_READ_ONLY_FIELD', details: { issues: [{ path: ['id'], code: 'read_only' }] } });
      const upsert = await t.post(`${base}/upsert`, [{ entity: 'Sharing', payload: { id: `upserted-${g}-${kind}`, fileId: file.id } }]).expect(200);
      expect(upsert.body[0]).toMatchObject({ status: 'Failed', stored: false });
      expect((await t.get(`${base}/Sharing?totalOnly=true`).expect(200)).body.total).toBe(before);
      await publicGet(`/sharings/chosen-${g}-${kind}.txt`).expect(404);
      // The document offers no id to send.
      const doc = (await request(t.server).get('/apidocs/openapi.json').expect(200)).body;
      expect(doc.components.schemas.SharingCreate.properties.id).toBeUndefined();
      expect(doc.components.schemas.SharingCreate.properties.fileId).toBeDefined();
    });

    it('stops answering (404) while the user who made it is deactivated', async () => {
      const sharer = await userWithRole(t, { scopes: { File: { create: true, read: 'own', edit: 'own', delete: 'no' }, Sharing: { create: true, read: 'own', edit: 'own', delete: 'own' } } });
      const file = (await sharer.post(`${base}/File`, { name: `mine-${g}.txt`, fileContents: dataUrl('mine', 'text/plain') }).expect(200)).body;
      const share = (await sharer.post(`${base}/Sharing`, { fileId: file.id }).expect(200)).body;
      const path = new URL(share.link).pathname;
      expect((await publicGet(path).expect(200)).body.toString()).toBe('mine');
      await t.patch(`${base}/User/${sharer.user.id}`, { isActive: false }).expect(200);
      const gone = await publicGet(path).expect(404);
      expect(gone.body.toString()).toContain('CORE_NOT_FOUND');
      await t.patch(`${base}/User/${sharer.user.id}`, { isActive: true }).expect(200);
      await publicGet(path).expect(200);
      await t.del(`${base}/User/${sharer.user.id}`).expect(200);
      await publicGet(path).expect(404);
    });

    it('says available: false while the user who made it is deactivated or deleted, as the link answers 404', async () => {
      const sharer = await userWithRole(t, { scopes: { File: { create: true, read: 'own', edit: 'own', delete: 'no' }, Sharing: { create: true, read: 'own', edit: 'own', delete: 'own' } } });
      const file = (await sharer.post(`${base}/File`, { name: `maker-${g}.txt`, fileContents: dataUrl('maker', 'text/plain') }).expect(200)).body;
      const share = (await sharer.post(`${base}/Sharing`, { fileId: file.id }).expect(200)).body;
      const other = (await t.post(`${base}/Sharing`, { fileId: file.id }).expect(200)).body;
      const available = async () => {
        const one = (await t.get(`${base}/Sharing/${share.id}`).expect(200)).body.available;
        const selected = (await t.get(`${base}/Sharing?select=available&where[0][type]=in&where[0][attribute]=id&where[0][value][]=${share.id}&where[0][value][]=${other.id}`).expect(200)).body.list;
        const byId = Object.fromEntries(selected.map((r: { id: string; available: boolean }) => [r.id, r.available]));
        expect(byId[other.id]).toBe(true);
        expect(byId[share.id]).toBe(one);
        return one;
      };
      expect(await available()).toBe(true);
      await t.patch(`${base}/User/${sharer.user.id}`, { isActive: false }).expect(200);
      await publicGet(new URL(share.link).pathname).expect(404);
      expect(await available()).toBe(false);
      await t.patch(`${base}/User/${sharer.user.id}`, { isActive: true }).expect(200);
      expect(await available()).toBe(true);
      await t.del(`${base}/User/${sharer.user.id}`).expect(200);
      expect(await available()).toBe(false);
    });
  });

  it('sends Referrer-Policy: no-referrer and X-Content-Type-Options: nosniff with every public answer', async () => {
    const file = await upload('/api', 'headers.txt');
    const open = (await t.post('/api/Sharing', { fileId: file.id }).expect(200)).body;
    const locked = (await t.post('/api/Sharing', { fileId: file.id, password: 'secret' }).expect(200)).body;
    const expired = (await t.post('/api/Sharing', { fileId: file.id, validTill: '2000-01-01 00:00:00' }).expect(200)).body;
    const answers = [
      await publicGet(new URL(open.link).pathname).expect(200),
      await publicGet(`${new URL(open.link).pathname}?view=1`).set('Range', 'bytes=0-3').expect(206),
      await publicGet(new URL(locked.link).pathname).expect(401),
      await publicGet(new URL(expired.link).pathname).expect(410),
      await publicGet('/sharings/unknown.txt').expect(404),
      await request(t.server).head(new URL(open.link).pathname).expect(200),
    ];
    for (const res of answers) {
      expect({ status: res.status, referrer: res.headers['referrer-policy'], sniff: res.headers['x-content-type-options'] }).toEqual({
        status: res.status,
        referrer: 'no-referrer',
        sniff: 'nosniff',
      });
    }
  });
});
