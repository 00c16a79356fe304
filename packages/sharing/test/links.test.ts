import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineEntity, systemContext } from '@entity-records/core';
import files from '@entity-records/files';
import sharing from '@entity-records/sharing';
import { GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../test/support/databases';
import { dataUrl, pngOf } from '../../files/test/helpers';

const Product = defineEntity({
  name: 'Product',
  fields: { name: { type: 'varchar', required: true }, mainImage: { type: 'link', entity: 'File' } },
});

const NEW = 'https://new.test/pim';

/** What every answer must show for a file, from the instance's current public URL. */
const fileLinks = (id: string, image: boolean) => ({
  downloadUrl: `${NEW}/api/File/${id}/download`,
  thumbnails: image
    ? { small: `${NEW}/api/File/${id}/thumbnail/small`, medium: `${NEW}/api/File/${id}/thumbnail/medium`, large: `${NEW}/api/File/${id}/thumbnail/large` }
    : { small: null, medium: null, large: null },
});

const sharingLinks = (id: string, ext: string, fileId: string, image: boolean) => {
  const { downloadUrl, thumbnails } = fileLinks(fileId, image);
  const link = `${NEW}/sharings/${id}.${ext}`;
  return { link, viewLink: `${link}?view=1`, filePathsData: { download: downloadUrl, thumbnails }, deleted: false, available: true };
};

type Made = { text: string; image: string; product: string; shareText: string; shareImage: string };

describe.each(TEST_DBS)('links on %s', (kind) => {
  let dir: string;
  let db: TestDatabase;
  let t: TestApi;
  const made = new Map<string, Made>();
  const start = (publicUrl: string) =>
    startTestApi(kind, { entities: [Product], publicUrl, plugins: [[files, { storageDir: path.join(dir, 'files') }], sharing] }, db);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-links-'));
    db = kind === 'postgres' ? await createTestDatabase(kind) : { kind, url: `sqlite:${path.join(dir, 'db.sqlite')}`, drop: async () => undefined };
    // Records made while the instance had another public URL.
    const old = await start('http://old.test');
    const png = await pngOf(20, 10);
    for (const [, base] of GENERATIONS) {
      const text = (await old.post(`${base}/File`, { name: 'notes.txt', fileContents: dataUrl('notes', 'text/plain') }).expect(200)).body.id;
      const image = (await old.post(`${base}/File`, { name: 'photo.png', fileContents: dataUrl(png, 'image/png') }).expect(200)).body.id;
      const product = (await old.post(`${base}/Product`, { name: 'P', mainImageId: image }).expect(200)).body.id;
      const shareText = (await old.post(`${base}/Sharing`, { fileId: text }).expect(200)).body.id;
      const shareImage = (await old.post(`${base}/Sharing`, { fileId: image }).expect(200)).body.id;
      made.set(base, { text, image, product, shareText, shareImage });
    }
    await old.close();
    t = await start(`${NEW}/`);
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('File answers carry links of the current public URL: lists, reads, linked records, creates and updates', async () => {
      const m = made.get(base) as Made;
      const expected = { [m.text]: fileLinks(m.text, false), [m.image]: fileLinks(m.image, true) };
      const list = (await t.get(`${base}/File?where[0][type]=in&where[0][attribute]=id&where[0][value][]=${m.text}&where[0][value][]=${m.image}`).expect(200)).body.list;
      expect(Object.fromEntries(list.map((r: Record<string, unknown>) => [r.id, { downloadUrl: r.downloadUrl, thumbnails: r.thumbnails }]))).toEqual(expected);
      expect((await t.get(`${base}/File/${m.image}`).expect(200)).body).toMatchObject(expected[m.image]);
      expect((await t.get(`/api/v1/Product/${m.product}/mainImage`).expect(200)).body.list).toEqual([expect.objectContaining(expected[m.image])]);
      const related = await t.get(`${base}/entityRelation?entityName=Product&id=${m.product}&link=mainImage`).expect(200);
      expect(related.body.list).toEqual([expect.objectContaining(expected[m.image])]);
      expect((await t.patch(`${base}/File/${m.text}`, { name: `renamed-${g}.txt` }).expect(200)).body).toMatchObject(expected[m.text]);
      expect((await t.put(`${base}/File/${m.image}`, { name: 'photo.png' }).expect(200)).body).toMatchObject(expected[m.image]);
      const created = (await t.post(`${base}/File`, { name: 'new.txt', fileContents: dataUrl('new') }).expect(200)).body;
      expect(created).toMatchObject(fileLinks(created.id, false));
      expect(await t.api.repository('File').get(systemContext(), m.image)).toMatchObject(expected[m.image]);
    });

    it('File links follow select: shown when chosen, absent otherwise, computed from nothing the answer hides', async () => {
      const m = made.get(base) as Made;
      const only = (await t.get(`${base}/File/${m.image}?select=downloadUrl`).expect(200)).body;
      expect(only).toEqual({ id: m.image, downloadUrl: fileLinks(m.image, true).downloadUrl });
      const thumbs = (await t.get(`${base}/File?select=thumbnails&where[0][type]=equals&where[0][attribute]=id&where[0][value]=${m.image}`).expect(200)).body;
      expect(thumbs.list).toEqual([{ id: m.image, thumbnails: fileLinks(m.image, true).thumbnails }]);
      const named = (await t.get(`${base}/File/${m.image}?select=name`).expect(200)).body;
      expect(named).toEqual({ id: m.image, name: 'photo.png' });
    });

    it('Sharing answers carry links of the current public URL, deleted and available: lists, reads, creates and updates', async () => {
      const m = made.get(base) as Made;
      const expected = { [m.shareText]: sharingLinks(m.shareText, 'txt', m.text, false), [m.shareImage]: sharingLinks(m.shareImage, 'png', m.image, true) };
      const pick = (r: Record<string, unknown>) => ({ link: r.link, viewLink: r.viewLink, filePathsData: r.filePathsData, deleted: r.deleted, available: r.available });
      const list = (await t.get(`${base}/Sharing?where[0][type]=in&where[0][attribute]=id&where[0][value][]=${m.shareText}&where[0][value][]=${m.shareImage}`).expect(200)).body.list;
      expect(Object.fromEntries(list.map((r: Record<string, unknown>) => [r.id, pick(r)]))).toEqual(expected);
      expect(pick((await t.get(`${base}/Sharing/${m.shareImage}`).expect(200)).body)).toEqual(expected[m.shareImage]);
      expect(pick((await t.patch(`${base}/Sharing/${m.shareImage}`, { name: `mine ${g}` }).expect(200)).body)).toEqual(expected[m.shareImage]);
      expect(pick((await t.put(`${base}/Sharing/${m.shareText}`, { name: `ours ${g}` }).expect(200)).body)).toEqual(expected[m.shareText]);
      const created = (await t.post(`${base}/Sharing`, { fileId: m.image }).expect(200)).body;
      expect(pick(created)).toEqual(sharingLinks(created.id, 'png', m.image, true));
    });

    it('keeps no links in the database: they are made for each answer', async () => {
      const created = (await t.post(`${base}/File`, { name: 'stored.png', fileContents: dataUrl(await pngOf(4, 4), 'image/png') }).expect(200)).body;
      const s = (await t.post(`${base}/Sharing`, { fileId: created.id }).expect(200)).body;
      // Computed fields have no column at all.
      const file = await t.api.database.knex('file').where({ id: created.id }).first();
      expect(Object.keys(file)).not.toEqual(expect.arrayContaining(['download_url']));
      expect(Object.keys(file)).not.toEqual(expect.arrayContaining(['thumbnails']));
      const sharing = await t.api.database.knex('sharing').where({ id: s.id }).first();
      for (const column of ['link', 'view_link', 'file_paths_data', 'available']) expect(Object.keys(sharing)).not.toContain(column);
      expect(s).toMatchObject({ link: expect.stringContaining(s.id), available: true });
    });

    it('selects computed fields, and refuses to filter or sort by them (400): the database has nothing to compare', async () => {
      const created = (await t.post(`${base}/File`, { name: 'computed.txt', fileContents: dataUrl('c', 'text/plain') }).expect(200)).body;
      const s = (await t.post(`${base}/Sharing`, { fileId: created.id }).expect(200)).body;
      const picked = (await t.get(`${base}/Sharing?select=available,link&where[0][type]=equals&where[0][attribute]=id&where[0][value]=${s.id}`).expect(200)).body;
      expect(picked.list).toEqual([{ id: s.id, available: true, link: s.link, deleted: false }]);
      // `deleted` is no field, but every answer shows it: select may name it
      const deleted = (await t.get(`${base}/Sharing?select=deleted&where[0][type]=equals&where[0][attribute]=id&where[0][value]=${s.id}`).expect(200)).body;
      expect(deleted.list).toEqual([{ id: s.id, deleted: false }]);
      await t.get(`${base}/File?select=deleted`).expect(400);
      const refused = [
        `${base}/Sharing?where[0][type]=isTrue&where[0][attribute]=available`,
        `${base}/Sharing?where[0][type]=isNotNull&where[0][attribute]=link`,
        `${base}/Sharing?sortBy=viewLink`,
        `${base}/File?where[0][type]=isNotNull&where[0][attribute]=downloadUrl`,
        `${base}/File?sortBy=thumbnails`,
      ];
      for (const path of refused) {
        const res = await t.get(path).expect(400);
        expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_QUERY', message: expect.stringMatching(/is computed for each answer/) });
      }
    });
  });
});
