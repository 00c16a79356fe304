import request from 'supertest';
import sharing from '@entity-records/sharing';
import { GENERATIONS, type Requests } from '../../../test/support/api';
import { userWithRole } from '../../../test/support/users';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, dataUrl, listFiles, pngOf, startFilesApi, type FilesTestApi } from './helpers';

type Scopes = Record<string, Record<string, unknown>>;

describe.each(TEST_DBS)('permissions of files and sharings on %s', (kind) => {
  let t: FilesTestApi;
  /** A user holding one new role with these scopes (and field rights); a client acting as them, with multipart uploads. */
  async function userWith(scopes: Scopes, fields?: Scopes) {
    const user = await userWithRole(t, { scopes, fields });
    return { ...user, upload: (p: string) => request(t.server).post(p).set('Authorization-Token', user.token) };
  }

  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    const objects = () => listFiles(t.storageDir).filter((f) => f.startsWith('files/') || f.startsWith('chunks/')).length;

    it('refuses every upload method without the create right, storing nothing', async () => {
      const reader = await userWith({ File: { read: 'all' } });
      const before = objects();
      const refused = [
        await reader.post(`${base}/File`, { name: 'a.txt', fileContents: dataUrl('a') }),
        await reader.post(`${base}/File`, { name: 'a.txt', url: 'http://127.0.0.1:9/a.txt' }),
        await reader.post(`${base}/File`, { id: `x${g}`, name: 'a.txt', fileUniqueHash: 'h', start: 0, piecesCount: 2, piece: dataUrl('a') }),
        await reader.post(`${base}/File/createChunk`, { id: `x${g}`, name: 'a.txt', fileUniqueHash: 'h', start: 0, piecesCount: 2, piece: dataUrl('a') }),
        await reader.upload(`${base}/File/upload`).attach('file', Buffer.from('a'), 'a.txt'),
      ];
      expect(refused.map((r) => [r.status, r.body.error?.code])).toEqual(Array(5).fill([403, 'CORE_FORBIDDEN']));
      expect(objects()).toBe(before);
      expect((await t.get(`${base}/File?totalOnly=true`).expect(200)).body.total).toBe((await reader.get(`${base}/File?totalOnly=true`).expect(200)).body.total);
    });

    it('lets downloads and thumbnails follow the read right, own records only under `own`', async () => {
      const png = await pngOf(40, 40);
      const admins = (await t.post(`${base}/File`, { name: 'admin.png', fileContents: dataUrl(png, 'image/png') }).expect(200)).body;
      const owner = await userWith({ File: { create: true, read: 'own' } });
      const mine = (await owner.post(`${base}/File`, { name: 'mine.txt', fileContents: dataUrl('mine') }).expect(200)).body;
      expect(mine.createdById).toBeTruthy();
      await owner.get(`${base}/File/${mine.id}/download`).expect(200);
      expect((await owner.get(`${base}/File/${admins.id}/download`).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      await owner.get(`${base}/File/${admins.id}/thumbnail/small`).expect(404);
      const stranger = await userWith({ Job: { read: 'own' } });
      expect((await stranger.get(`${base}/File/${mine.id}/download`).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      await stranger.get(`${base}/File/${admins.id}/thumbnail/small`).expect(403);
      await request(t.server).get(`${base}/File/${mine.id}/download`).expect(401);
    });

    it('serves downloads and thumbnails whole also to a role that may not read size, hash, type or width', async () => {
      const png = await pngOf(30, 20);
      const file = (await t.post(`${base}/File`, { name: 'hidden.png', fileContents: dataUrl(png, 'image/png') }).expect(200)).body;
      const hidden = { read: false, edit: false };
      const reader = await userWith({ File: { read: 'all' } }, { File: { fileSize: hidden, hash: hidden, mimeType: hidden, width: hidden, height: hidden } });
      const record = (await reader.get(`${base}/File/${file.id}`).expect(200)).body;
      expect([record.fileSize, record.hash, record.width]).toEqual([undefined, undefined, undefined]);
      expect(record.thumbnails.small).toMatch(/\/thumbnail\/small$/);
      const res = await reader.get(`${base}/File/${file.id}/download`).buffer(true).parse(binary).expect(200);
      expect(Buffer.compare(res.body, png)).toBe(0);
      expect(res.headers).toMatchObject({ 'content-length': String(png.length), 'content-type': 'image/png', etag: `"${file.hash}"` });
      expect((await reader.get(`${base}/File/${file.id}/download`).set('Range', 'bytes=0-3').expect(206)).headers['content-range']).toBe(`bytes 0-3/${png.length}`);
      await reader.get(`${base}/File/${file.id}/thumbnail/small`).expect(200).expect('Content-Type', 'image/png');
    });

    it('lets a user share only files they may read, with the create right on Sharing', async () => {
      const file = (await t.post(`${base}/File`, { name: 'private.txt', fileContents: dataUrl('private') }).expect(200)).body;
      const sharer = await userWith({ Sharing: { create: true, read: 'own' }, File: { create: true, read: 'own' } });
      expect((await sharer.post(`${base}/Sharing`, { fileId: file.id }).expect(400)).body.error.code).toBe('CORE_INVALID_LINK');
      const own = (await sharer.post(`${base}/File`, { name: 'own.txt', fileContents: dataUrl('own') }).expect(200)).body;
      const shared = (await sharer.post(`${base}/Sharing`, { fileId: own.id }).expect(200)).body;
      expect(shared).toMatchObject({ fileId: own.id, active: true });
      const noShare = await userWith({ File: { read: 'all' } });
      expect((await noShare.post(`${base}/Sharing`, { fileId: file.id }).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      expect(await t.api.database.knex('sharing').where({ file_id: file.id }).count({ n: '*' }).first()).toEqual({ n: 0 });
    });

    it('judges the file of a sharing as any link, in the order of every write and alike on every route (CONTRACT §15)', async () => {
      const file = (await t.post(`${base}/File`, { name: 'judged.txt', fileContents: dataUrl('judged') }).expect(200)).body;
      const sharing = (await t.post(`${base}/Sharing`, { fileId: file.id, name: 'judged' }).expect(200)).body;
      const path = `${base}/Sharing/${sharing.id}`;
      const upsertPath = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
      /** Status, code and message of a create, an update by PATCH and by PUT, a link route, a mass update and an upsert item. */
      const everyRoute = async (client: Requests, body: Record<string, unknown>, link?: { method: 'post' | 'delete'; id: string }) => {
        const answer = (r: request.Response) => [r.status, r.body.error?.code, r.body.error?.message];
        const out = [answer(await client.patch(path, body)), answer(await client.put(path, body))];
        if (link) {
          const route = link.method === 'post' ? client.post(`${path}/file`, { id: link.id }) : client.del(`${path}/file`).send({ id: link.id });
          out.push(answer(await route));
        }
        out.push(answer(await client.post(`${base}/entityMassUpdate`, { entityName: 'Sharing', ids: [sharing.id], values: body })));
        const [item] = (await client.post(upsertPath, [{ entity: 'Sharing', payload: { id: sharing.id, ...body } }]).expect(200)).body;
        expect(item).toMatchObject({ status: 'Failed', stored: false });
        return { routes: out, upsert: item.message as string };
      };

      // A role with no right on File at all: its file is the 400 of a file that does not exist.
      const blind = await userWith({ Sharing: { create: true, read: 'all', edit: 'all' } });
      const missing = (await blind.post(`${base}/Sharing`, { fileId: 'nope' }).expect(400)).body.error;
      const unreadable = (await blind.post(`${base}/Sharing`, { fileId: file.id }).expect(400)).body.error;
      expect([missing.code, unreadable.code]).toEqual(['CORE_INVALID_LINK', 'CORE_INVALID_LINK']);
      expect(unreadable.message).toBe(missing.message.replace('nope', file.id));
      const [created] = (await blind.post(upsertPath, [{ entity: 'Sharing', payload: { fileId: file.id } }]).expect(200)).body;
      expect(created).toMatchObject({ status: 'Failed', message: unreadable.message });

      // A field the role may not edit is 403 before its link is judged, whatever file it names.
      const locked = await userWith({ Sharing: { create: true, read: 'all', edit: 'all' }, File: { read: 'all' } }, { Sharing: { file: { read: false, edit: false } } });
      for (const fileId of ['nope', file.id]) {
        const { routes, upsert } = await everyRoute(locked, { fileId }, { method: 'post', id: fileId });
        expect(routes).toEqual(Array(4).fill([403, 'CORE_FORBIDDEN', 'Not allowed to edit Sharing.file']));
        expect(upsert).toBe('Not allowed to edit Sharing.file');
      }
      expect((await locked.post(`${base}/Sharing`, { fileId: 'nope' }).expect(403)).body.error.message).toBe('Not allowed to edit Sharing.file');

      // The body before its link: an unknown key is 400 CORE_UNKNOWN_FIELD however wrong the file.
      const unknown = await everyRoute(t, { fileId: 'nope', nope: 1 });
      expect(unknown.routes.map(([status, code]) => [status, code])).toEqual(Array(3).fill([400, 'CORE_UNKNOWN_FIELD']));
      expect(unknown.upsert).toBe('Unknown field for Sharing: nope');
      expect((await t.post(`${base}/Sharing`, { fileId: 'nope', nope: 1 }).expect(400)).body.error.code).toBe('CORE_UNKNOWN_FIELD');

      // The file is required: taking it off (a null, or the link route's DELETE) reads the same everywhere.
      const cleared = await everyRoute(t, { fileId: null }, { method: 'delete', id: file.id });
      expect(cleared.routes).toEqual(Array(4).fill([400, 'CORE_VALIDATION_FAILED', cleared.upsert]));
      expect((await t.post(`${base}/Sharing`, {}).expect(400)).body.error.message).toBe(cleared.upsert);

      const stored = (await t.get(path).expect(200)).body;
      expect(stored).toMatchObject({ fileId: file.id, name: 'judged', modifiedAt: sharing.modifiedAt });
    });
  });
});
