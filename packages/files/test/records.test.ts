import { defineEntity } from '@entity-records/core';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { dataUrl, listFiles, startFilesApi, type FilesTestApi } from './helpers';

const Product = defineEntity({
  name: 'Product',
  fields: { name: { type: 'varchar', required: true }, mainImage: { type: 'link', entity: 'File' } },
});

describe.each(TEST_DBS)('File records on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, { maxFileSize: 1000 }, { entities: [Product], maxBodySize: '4kb' });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    const create = (body: Record<string, unknown>) => t.post(`${base}/File`, body);

    it('makes an id when none is given, and takes a given one', async () => {
      const made = (await create({ name: 'a.txt', fileContents: dataUrl('a') }).expect(200)).body;
      expect(made.id).toMatch(/^[0-9a-f-]{36}$/);
      const given = (await create({ id: `given-${g}`, name: 'a.txt', fileContents: dataUrl('a') }).expect(200)).body;
      expect(given.id).toBe(`given-${g}`);
      expect((await create({ id: `given-${g}`, name: 'b.txt', fileContents: dataUrl('b') }).expect(409)).body.error.code).toBe('CORE_UNIQUE_VIOLATION');
      expect((await create({ id: 'not valid!', name: 'b.txt', fileContents: dataUrl('b') }).expect(400)).body.error.code).toBe('CORE_INVALID_ID');
    });

    it('refuses an id that is no string of the pattern (a number, an empty string, an object) on every upload, as every create', async () => {
      const total = async () => (await t.get(`${base}/File?totalOnly=true`).expect(200)).body.total;
      const before = { files: await total(), stored: listFiles(t.storageDir) };
      for (const id of [5, '', true, ['a'], { a: 1 }]) {
        const base64 = await create({ id, name: 'a.txt', fileContents: dataUrl('a') });
        const chunk = await t.post(`${base}/File`, { id, name: 'a.txt', fileUniqueHash: `h-${g}-${JSON.stringify(id)}`, piecesCount: 1, start: 0, piece: dataUrl('a') });
        const record = await t.post(`${base}/Product`, { id, name: 'p' });
        expect({ id, answers: [base64, chunk, record].map((r) => `${r.status} ${r.body.error?.code}`) }).toEqual({ id, answers: Array(3).fill('400 CORE_INVALID_ID') });
      }
      const part = await t.post(`${base}/File/upload`).field('id', '').attach('file', Buffer.from('part'), 'part.txt');
      expect(`${part.status} ${part.body.error?.code}`).toBe('400 CORE_INVALID_ID');
      expect(await total()).toBe(before.files);
      expect(listFiles(t.storageDir)).toEqual(before.stored);
    });

    it('answers an upload with the version of the File as a strong ETag, as every create', async () => {
      const res = await create({ name: 'versioned.txt', fileContents: dataUrl('v') }).expect(200);
      expect(res.headers.etag).toBe('"1"');
      expect((await t.get(`${base}/File/${res.body.id}`).expect(200)).headers.etag).toBe('"1"');
      const multipart = await t.post(`${base}/File/upload`).field('name', 'versioned-part.txt').attach('file', Buffer.from('part'), 'part.txt').expect(200);
      expect(multipart.headers.etag).toBe('"1"');
    });

    it('refuses a body without contents, or with fields the upload sets', async () => {
      expect((await create({ name: 'a.txt' }).expect(400)).body.error.code).toBe('FILES_CONTENT_REQUIRED');
      expect((await create({ name: 'a.txt', fileContents: dataUrl('a'), url: 'http://example.invalid/' }).expect(400)).body.error.code).toBe('FILES_CONTENT_INVALID');
      for (const field of ['hash', 'fileSize', 'mimeType', 'downloadUrl', 'width']) {
        const res = await create({ name: 'a.txt', fileContents: dataUrl('a'), [field]: field === 'fileSize' || field === 'width' ? 5 : 'x' }).expect(400);
        expect({ field, code: res.body.error.code }).toEqual({ field, code: 'CORE_READ_ONLY_FIELD' });
      }
      expect((await create({ fileContents: dataUrl('a') }).expect(400)).body.error.code).toBe('CORE_VALIDATION_FAILED');
      // A JSON array is no upload: its one issue is the body itself.
      for (const path of ['/File', '/File/createChunk']) {
        const array = (await t.post(`${base}${path}`, [{ name: 'a.txt', fileContents: dataUrl('a') }]).expect(400)).body.error;
        expect({ path, code: array.code, issues: array.details.issues }).toEqual({ path, code: 'CORE_VALIDATION_FAILED', issues: [{ path: [], code: 'invalid_type', message: 'expected an object, got an array' }] });
      }
      expect((await create({ name: 'a.txt', fileContents: dataUrl('a'), colour: 'red' }).expect(400)).body.error.code).toBe('CORE_UNKNOWN_FIELD');
      expect(listFiles(t.storageDir).filter((f) => f.startsWith('files/')).length).toBe((await t.get('/api/File?totalOnly=true').expect(200)).body.total);
    });

    it('decodes base64 strictly and records the data URL mime type', async () => {
      const bad = ['data:text/plain;base64,aGVsbG8=\n', 'data:text/plain;base64,aGVs bG8=', 'data:text/plain;base64,aGVsbG9=', 'data:text/plain;base64,a-_b', 'data:text/plain;base64,aG=Vs', 'data:text/plain;base64,aG==aGVs', 'data:text/plain;base64,YR==', 'data:text/plain;base64,aGVsbG8\u00e9', 'data:text/plain;base64,aGVsbG8===', 'data:text/plain;base64,aGVsbG8', 'data:text/plain;base64,aGVsbA', 'aGVsbG8=', 'data:text/plain,hello'];
      for (const fileContents of bad) {
        const res = await create({ name: 'a.txt', fileContents }).expect(400);
        expect({ fileContents, code: res.body.error.code }).toEqual({ fileContents, code: 'FILES_CONTENT_INVALID' });
      }
      const ok = (await create({ name: 'a.json', fileContents: 'data:application/json;charset=utf-8;base64,e30=' }).expect(200)).body;
      expect(ok).toMatchObject({ mimeType: 'application/json', fileSize: 2 });
      const empty = (await create({ name: 'empty.txt', fileContents: 'data:text/plain;base64,' }).expect(200)).body;
      expect(empty).toMatchObject({ fileSize: 0, hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' });
    });

    it('answers 413 for a body over maxBodySize and a file over maxFileSize', async () => {
      const body = await create({ name: 'big.bin', fileContents: dataUrl(Buffer.alloc(5000)) }).expect(413);
      expect(body.body.error.code).toBe('CORE_PAYLOAD_TOO_LARGE');
      expect(body.headers['content-type']).toMatch(/application\/json/);
      const file = await create({ name: 'big.bin', fileContents: dataUrl(Buffer.alloc(1001)) }).expect(413);
      expect(file.body.error.code).toBe('FILES_TOO_LARGE');
      await create({ name: 'fits.bin', fileContents: dataUrl(Buffer.alloc(1000)) }).expect(200);
    });

    it('renames through PATCH and PUT, refuses changes of what the upload set, and cannot be made by upsert or link objects', async () => {
      const f = (await create({ name: 'old.txt', fileContents: dataUrl('x') }).expect(200)).body;
      expect((await t.patch(`${base}/File/${f.id}`, { name: 'new.txt' }).expect(200)).body).toMatchObject({ name: 'new.txt', hash: f.hash });
      expect((await t.put(`${base}/File/${f.id}`, { name: 'newer.txt' }).expect(200)).body.name).toBe('newer.txt');
      // The record as read goes back unchanged (computed and read-only values included), with another name.
      const read = (await t.get(`${base}/File/${f.id}`).expect(200)).body;
      expect((await t.put(`${base}/File/${f.id}`, { ...read, name: 'round trip.txt' }).expect(200)).body.name).toBe('round trip.txt');
      expect((await t.patch(`${base}/File/${f.id}`, { downloadUrl: 'http://elsewhere.invalid/x' }).expect(400)).body.error.code).toBe('CORE_READ_ONLY_FIELD');
      expect((await t.patch(`${base}/File/${f.id}`, { hash: 'f'.repeat(64) }).expect(400)).body.error.code).toBe('CORE_READ_ONLY_FIELD');
      expect((await t.patch(`${base}/File/${f.id}`, { storageKey: 'files/x' }).expect(400)).body.error.code).toBe('CORE_READ_ONLY_FIELD');
      expect((await t.patch(`${base}/File/${f.id}`, { name: 'a/b.txt' }).expect(400)).body.error.code).toBe('FILES_NAME_INVALID');
      // Control characters of both ranges (C0 with DEL, and C1: U+0080-U+009F), on create and rename.
      for (const name of ['tab\there.txt', 'del\u007f.txt', 'next\u0085line.txt', 'csi\u009b.txt']) {
        expect([name, (await t.patch(`${base}/File/${f.id}`, { name }).expect(400)).body.error.code]).toEqual([name, 'FILES_NAME_INVALID']);
        expect([name, (await create({ name, fileContents: dataUrl('x') }).expect(400)).body.error.code]).toEqual([name, 'FILES_NAME_INVALID']);
      }
      expect((await t.patch(`${base}/File/${f.id}`, { name: 'caf\u00e9 \u00a0.txt' }).expect(200)).body.name).toBe('caf\u00e9 \u00a0.txt');
      await t.patch(`${base}/File/${f.id}`, { name: 'round trip.txt' }).expect(200);
      const upsert = await t.post(`${base}/upsert`, [{ entity: 'File', payload: { name: 'u.txt' } }]).expect(200);
      expect(upsert.body[0]).toMatchObject({ status: 'Failed', stored: false });
      const upsertHash = await t.post(`${base}/upsert`, [{ entity: 'File', payload: { id: f.id, hash: 'f'.repeat(64) } }]).expect(200);
      expect(upsertHash.body[0]).toMatchObject({ status: 'Failed' });
      expect((await t.post(`${base}/Product`, { name: 'P', mainImage: { name: 'nope.png' } }).expect(400)).body.error.code).toBe('FILES_CONTENT_REQUIRED');
      const product = (await t.post(`${base}/Product`, { name: 'P', mainImageId: f.id }).expect(200)).body;
      expect(product).toMatchObject({ mainImageId: f.id, mainImageName: 'round trip.txt' });
    });

    it('keeps the contents of a soft-deleted file and removes them with the row', async () => {
      const f = (await create({ name: 'gone.txt', fileContents: dataUrl('gone') }).expect(200)).body;
      const objects = () => listFiles(t.storageDir).filter((p) => p.startsWith('files/')).length;
      const before = objects();
      await t.del(`${base}/File/${f.id}`).expect(200);
      await t.get(`${base}/File/${f.id}/download`).expect(404);
      expect(objects()).toBe(before);
      await t.post(`${base}/entityRestore`, { entityName: 'File', ids: [f.id] }).expect(200);
      await t.get(`${base}/File/${f.id}/download`).expect(200);
      await t.del(`${base}/File/${f.id}`).set('permanently', 'true').expect(200);
      expect(objects()).toBe(before - 1);
    });

    it('answers 404 for unknown files and for thumbnails of files that are not images', async () => {
      expect((await t.get(`${base}/File/nope/download`).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      const f = (await create({ name: 'n.txt', fileContents: dataUrl('n') }).expect(200)).body;
      expect((await t.get(`${base}/File/${f.id}/thumbnail/small`).expect(404)).body.error.code).toBe('FILES_NO_THUMBNAIL');
      expect((await t.get(`${base}/File/${f.id}/thumbnail/huge`).expect(404)).body.error.code).toBe('FILES_NO_THUMBNAIL');
      const svg = (await create({ name: 'x.svg', fileContents: dataUrl('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'image/svg+xml') }).expect(200)).body;
      expect(svg).toMatchObject({ width: null, thumbnails: { small: null, medium: null, large: null } });
    });

    it('shows the thumbnail sizes in the metadata, and not the internal storage key', async () => {
      const meta = await t.get(g === 'A' ? '/api/metadata' : '/api/v1/Metadata').expect(200);
      expect(meta.body.app.thumbnailTypes).toEqual({ small: 128, medium: 256, large: 1024 });
      expect(meta.body.entityDefs.File.fields.hash).toMatchObject({ type: 'varchar', readOnly: true });
      expect(meta.body.entityDefs.File.fields.storageKey).toBeUndefined();
    });
  });
});
