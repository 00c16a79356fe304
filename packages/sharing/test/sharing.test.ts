import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import sharing from '@entity-records/sharing';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, dataUrl, listFiles, startFilesApi, type FilesTestApi } from '../../files/test/helpers';

const DATE_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

describe.each(TEST_DBS)('Sharing on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  const upload = async (base: string, name: string, contents: string, mime = 'text/plain') =>
    (await t.post(`${base}/File`, { name, fileContents: dataUrl(contents, mime) }).expect(200)).body as { id: string; name: string; downloadUrl: string; thumbnails: unknown };

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('answers the fields of the spec at creation, and the link downloads the file without a token', async () => {
      const file = await upload(base, 'report.PDF', `report of ${g}`, 'application/pdf');
      const res = await t.post(`${base}/Sharing`, { fileId: file.id }).expect(200);
      const s = res.body;
      expect(s).toMatchObject({
        name: 'report.PDF',
        deleted: false,
        active: true,
        available: true,
        fileId: file.id,
        fileName: 'report.PDF',
        link: `http://files.test/sharings/${s.id}.pdf`,
        viewLink: `http://files.test/sharings/${s.id}.pdf?view=1`,
        filePathsData: { download: file.downloadUrl, thumbnails: { small: null, medium: null, large: null } },
        createdById: expect.any(String),
        modifiedById: expect.any(String),
        modifiedByName: 'Administrator',
        used: 0,
      });
      expect(s.createdAt).toMatch(DATE_TIME);
      expect(s.modifiedAt).toMatch(DATE_TIME);
      expect(s.password).toBeUndefined();

      const got = await request(t.server).get(`/sharings/${s.id}.pdf`).buffer(true).parse(binary).expect(200);
      expect(got.body.toString()).toBe(`report of ${g}`);
      expect(got.headers['content-disposition']).toMatch(/^attachment; filename="report.PDF"/);
      expect(got.headers['content-type']).toBe('application/pdf');
      const view = await request(t.server).get(`/sharings/${s.id}.pdf?view=1`).buffer(true).parse(binary).expect(200);
      expect(view.headers['content-disposition']).toMatch(/^inline; /);
      const read = await t.get(`${base}/Sharing/${s.id}`).expect(200);
      expect(read.body).toMatchObject({ used: 2, deleted: false, available: true });
      // The OpenAPI read schema names every key of the answer, `deleted` too.
      const doc = (await request(t.server).get('/apidocs/openapi.json').expect(200)).body;
      const documented = doc.components.schemas.Sharing.properties;
      expect(Object.keys(read.body).filter((key) => !(key in documented))).toEqual([]);
      expect(documented.deleted).toMatchObject({ type: 'boolean', readOnly: true });
    });

    it('reads a sharing whose `active` is null as the link answers it: not available, 404', async () => {
      const f = await upload(base, 'null-active.txt', 'x');
      const s = (await t.post(`${base}/Sharing`, { fileId: f.id, active: null }).expect(200)).body;
      expect(s).toMatchObject({ active: null, available: false });
      await request(t.server).get(`/sharings/${s.id}.txt`).expect(404);
      await t.patch(`${base}/Sharing/${s.id}`, { active: true }).expect(200);
      expect((await t.get(`${base}/Sharing/${s.id}`).expect(200)).body.available).toBe(true);
      await request(t.server).get(`/sharings/${s.id}.txt`).expect(200);
    });

    it('takes `available` sent back unchanged (as read), never set to another value', async () => {
      const f = await upload(base, 'roundtrip.txt', 'x');
      const s = (await t.post(`${base}/Sharing`, { fileId: f.id }).expect(200)).body;
      expect((await t.patch(`${base}/Sharing/${s.id}`, { available: true, name: 'renamed' }).expect(200)).body).toMatchObject({ name: 'renamed', available: true });
      const refused = await t.patch(`${base}/Sharing/${s.id}`, { available: false }).expect(400);
      expect(refused.body.error.code).toBe('CORE_READ_ONLY_FIELD');
      await t.patch(`${base}/Sharing/${s.id}`, { active: false }).expect(200);
      // Now it reads false: false is what may come back.
      await t.patch(`${base}/Sharing/${s.id}`, { available: false, name: 'off' }).expect(200);
      await t.patch(`${base}/Sharing/${s.id}`, { available: true }).expect(400);
      // The same through an upsert item (CONTRACT §15: one outcome on every route).
      const [same, other] = (await t.post(`${base}/upsert`, [{ entity: 'Sharing', payload: { id: s.id, available: false, name: 'upserted' } }, { entity: 'Sharing', payload: { id: s.id, available: true } }]).expect(200)).body;
      expect(same).toMatchObject({ status: 'Updated', entity: { name: 'upserted' } });
      expect(other).toMatchObject({ status: 'Failed', stored: false });
    });

    it('serves byte ranges of a link; a download counts once, but on a link with a limit every request does', async () => {
      const file = await upload(base, 'range.txt', '0123456789abcdef');
      const get = (path: string, range?: string) => {
        const test = request(t.server).get(path).buffer(true).parse(binary);
        return range ? test.set('Range', range) : test;
      };
      const used = async (id: string) => (await t.get(`${base}/Sharing/${id}`).expect(200)).body.used;
      const free = (await t.post(`${base}/Sharing`, { fileId: file.id }).expect(200)).body;
      const path = new URL(free.link).pathname;
      const first = await get(path, 'bytes=0-3').expect(206);
      expect({ body: first.body.toString(), range: first.headers['content-range'], accept: first.headers['accept-ranges'] }).toEqual({ body: '0123', range: 'bytes 0-3/16', accept: 'bytes' });
      expect(first.headers['content-disposition']).toMatch(/^attachment; /);
      expect((await get(path, 'bytes=4-').expect(206)).body.toString()).toBe('456789abcdef');
      expect(await used(free.id)).toBe(1);
      const view = await get(`${path}?view=1`, 'bytes=-2').expect(206);
      expect({ body: view.body.toString(), disposition: view.headers['content-disposition'] }).toMatchObject({ body: 'ef', disposition: expect.stringMatching(/^inline; /) });
      expect((await get(path, 'bytes=16-').expect(416)).headers['content-range']).toBe('bytes */16');
      expect(await used(free.id)).toBe(1);
      await get(path).expect(200);
      expect(await used(free.id)).toBe(2);

      const limited = (await t.post(`${base}/Sharing`, { fileId: file.id, allowedUsage: 2 }).expect(200)).body;
      const limitedPath = new URL(limited.link).pathname;
      await get(limitedPath, 'bytes=8-').expect(206);
      await get(limitedPath, 'bytes=0-7').expect(206);
      expect(await used(limited.id)).toBe(2);
      expect((await get(limitedPath, 'bytes=8-').expect(410)).body.toString()).toMatch(/SHARING_USED_UP/);
    });

    it('refuses a link asked with a query string it cannot read (400) before anything is counted: no use of the link is spent', async () => {
      const file = await upload(base, 'query.txt', 'contents');
      const limited = (await t.post(`${base}/Sharing`, { fileId: file.id, allowedUsage: 1 }).expect(200)).body;
      const path = new URL(limited.link).pathname;
      for (const query of [`view${'[a]'.repeat(60)}=1`, 'view=%FF', 'view=1&x%00=1', '__proto__[view]=1']) {
        for (const method of ['get', 'post'] as const) {
          const res = await request(t.server)[method](`${path}?${query}`);
          expect([res.status, res.body.error?.code]).toEqual([400, 'CORE_INVALID_QUERY']);
        }
      }
      expect((await t.get(`${base}/Sharing/${limited.id}`).expect(200)).body).toMatchObject({ used: 0, available: true });
      const got = await request(t.server).get(`${path}?view=1`).buffer(true).parse(binary).expect(200);
      expect(got.body.toString()).toBe('contents');
    });

    it('moves the version of the sharing with every counted download, and only then (CONTRACT §16)', async () => {
      const file = await upload(base, 'counted.txt', '0123456789');
      const created = await t.post(`${base}/Sharing`, { fileId: file.id }).expect(200);
      const first = created.headers.etag as string;
      expect(first).toMatch(/^"\d+"$/);
      const read = (ifNoneMatch: string) => t.get(`${base}/Sharing/${created.body.id}`).set('If-None-Match', ifNoneMatch);
      expect((await read(first)).status).toBe(304);
      const linkPath = new URL(created.body.link).pathname;

      await request(t.server).get(linkPath).expect(200);
      const once = await read(first);
      expect(once.status).toBe(200);
      expect(once.body.used).toBe(1);
      const second = once.headers.etag as string;
      expect(second).not.toBe(first);
      expect((await read(second)).status).toBe(304);

      // Not counted, not changed: a HEAD and a range that continues a download.
      await request(t.server).head(linkPath).expect(200);
      await request(t.server).get(linkPath).set('Range', 'bytes=5-').expect(206);
      expect((await read(second)).status).toBe(304);

      await request(t.server).post(linkPath).type('form').send({}).expect(200);
      const twice = await read(second);
      expect([twice.status, twice.body.used]).toEqual([200, 2]);
      expect(twice.headers.etag).not.toBe(second);

      // A refused download counts nothing and changes nothing.
      const limited = await t.post(`${base}/Sharing`, { fileId: file.id, allowedUsage: 1 }).expect(200);
      const limitedPath = new URL(limited.body.link).pathname;
      await request(t.server).get(limitedPath).expect(200);
      const usedUp = (await t.get(`${base}/Sharing/${limited.body.id}`).expect(200)).headers.etag as string;
      expect(usedUp).not.toBe(limited.headers.etag);
      await request(t.server).get(limitedPath).expect(410);
      expect((await t.get(`${base}/Sharing/${limited.body.id}`).set('If-None-Match', usedUp)).status).toBe(304);
    });

    it('refuses with 404 unknown and inactive sharings, with 410 used-up and expired ones', async () => {
      const file = await upload(base, 'a.txt', 'a');
      await request(t.server).get('/sharings/nope.txt').expect(404);
      const inactive = (await t.post(`${base}/Sharing`, { fileId: file.id, active: false }).expect(200)).body;
      expect(inactive.available).toBe(false);
      expect((await request(t.server).get(`/sharings/${inactive.id}.txt`).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      const once = (await t.post(`${base}/Sharing`, { fileId: file.id, allowedUsage: 1 }).expect(200)).body;
      await request(t.server).get(`/sharings/${once.id}.txt`).expect(200);
      expect((await request(t.server).get(`/sharings/${once.id}.txt`).expect(410)).body.error.code).toBe('SHARING_USED_UP');
      expect((await t.get(`${base}/Sharing/${once.id}`).expect(200)).body).toMatchObject({ used: 1, available: false });
      const past = (await t.post(`${base}/Sharing`, { fileId: file.id, validTill: '2001-01-01 00:00:00' }).expect(200)).body;
      expect((await request(t.server).get(`/sharings/${past.id}.txt`).expect(410)).body.error.code).toBe('SHARING_EXPIRED');
    });

    it('answers 404 and counts no use when the contents are missing from storage', async () => {
      const before = new Set(listFiles(t.storageDir));
      const file = await upload(base, 'lost.txt', 'lost');
      const s = (await t.post(`${base}/Sharing`, { fileId: file.id, allowedUsage: 1 }).expect(200)).body;
      for (const name of listFiles(t.storageDir).filter((n) => !before.has(n))) fs.rmSync(path.join(t.storageDir, name));
      const res = await request(t.server).get(`/sharings/${s.id}.txt`).expect(404).expect('Content-Type', /json/);
      expect(res.body.error).toMatchObject({ code: 'CORE_NOT_FOUND', message: 'The contents of this file are missing from storage' });
      expect((await t.get(`${base}/Sharing/${s.id}`).expect(200)).body.used).toBe(0);
    });

    it('asks for a password (header or posted form), stored hashed and never shown', async () => {
      const file = await upload(base, 'secret.txt', 'secret');
      const s = (await t.post(`${base}/Sharing`, { fileId: file.id, password: 'open sesame' }).expect(200)).body;
      expect(s.password).toBeUndefined();
      expect((await request(t.server).get(`/sharings/${s.id}.txt`).expect(401)).body.error.code).toBe('SHARING_PASSWORD_REQUIRED');
      expect((await request(t.server).get(`/sharings/${s.id}.txt`).set('Sharing-Password', 'wrong').expect(401)).body.error.code).toBe('CORE_UNAUTHORIZED');
      const ok = await request(t.server).get(`/sharings/${s.id}.txt`).set('Sharing-Password', 'open sesame').buffer(true).parse(binary).expect(200);
      expect(ok.body.toString()).toBe('secret');
      const form = await request(t.server).post(`/sharings/${s.id}.txt`).type('form').send({ password: 'open sesame' }).buffer(true).parse(binary).expect(200);
      expect(form.body.toString()).toBe('secret');
      const stored = await t.api.database.knex('sharing').where({ id: s.id }).first();
      expect(stored.password).toMatch(/^scrypt\$/);
    });
  });
});

describe.each(TEST_DBS)('Sharing changes and limits on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing], auth: { throttle: { maxFailuresPerUser: 3 } } });
  });
  afterAll(() => t.close());

  const upload = async (base: string, name: string, contents: string) =>
    (await t.post(`${base}/File`, { name, fileContents: dataUrl(contents, 'text/plain') }).expect(200)).body as { id: string };

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    it('follows changes: deactivation, a new limit, a new or removed password, another file', async () => {
      const first = await upload(base, 'one.txt', 'one');
      const s = (await t.post(`${base}/Sharing`, { fileId: first.id, name: `mine ${g}` }).expect(200)).body;
      const path = new URL(s.link).pathname;
      expect((await t.patch(`${base}/Sharing/${s.id}`, { active: false }).expect(200)).body).toMatchObject({ active: false, available: false });
      await request(t.server).get(path).expect(404);
      expect((await t.patch(`${base}/Sharing/${s.id}`, { active: true, allowedUsage: 1 }).expect(200)).body).toMatchObject({ available: true });
      await request(t.server).head(path).expect(200);
      await request(t.server).head(path).expect(200);
      await request(t.server).get(path).expect(200);
      await request(t.server).get(path).expect(410);
      expect((await t.patch(`${base}/Sharing/${s.id}`, { allowedUsage: 5, password: 'pw' }).expect(200)).body).toMatchObject({ available: true, used: 1 });
      await request(t.server).get(path).expect(401);
      await request(t.server).get(path).set('Sharing-Password', 'pw').expect(200);
      await t.patch(`${base}/Sharing/${s.id}`, { password: null }).expect(200);
      await request(t.server).get(path).expect(200);
      const second = await upload(base, 'two.csv', 'two');
      const moved = (await t.patch(`${base}/Sharing/${s.id}`, { fileId: second.id }).expect(200)).body;
      expect(moved).toMatchObject({ fileId: second.id, fileName: 'two.csv', link: `http://files.test/sharings/${s.id}.csv` });
      expect((await request(t.server).get(`/sharings/${s.id}.csv`).buffer(true).parse(binary).expect(200)).body.toString()).toBe('two');
      for (const field of ['used', 'link', 'available']) {
        const res = await t.patch(`${base}/Sharing/${s.id}`, { [field]: field === 'used' ? 0 : field === 'available' ? false : 'http://x' }).expect(400);
        expect({ field, code: res.body.error.code }).toEqual({ field, code: 'CORE_READ_ONLY_FIELD' });
      }
      const list = (await t.get(`${base}/Sharing?where[0][type]=equals&where[0][attribute]=id&where[0][value]=${s.id}`).expect(200)).body;
      expect(list.list[0]).toMatchObject({ id: s.id, link: moved.link, used: 4 });
      expect(list.list[0].password).toBeUndefined();
    });

    it('shows deleted and an available of the moment in every answer: expired by time, used up, file deleted', async () => {
      const f = await upload(base, 'avail.txt', 'x');
      const [expiring, limited, orphan] = [
        (await t.post(`${base}/Sharing`, { fileId: f.id, validTill: '2999-01-01 00:00:00' }).expect(200)).body,
        (await t.post(`${base}/Sharing`, { fileId: f.id, allowedUsage: 1 }).expect(200)).body,
        (await t.post(`${base}/Sharing`, { fileId: (await upload(base, 'orphan.txt', 'y')).id }).expect(200)).body,
      ];
      const ids = [expiring.id, limited.id, orphan.id];
      const states = async () => {
        const list = (await t.get(`${base}/Sharing?where[0][type]=in&where[0][attribute]=id&where[0][value][]=${ids.join('&where[0][value][]=')}`).expect(200)).body.list;
        const read = await Promise.all(ids.map(async (id) => (await t.get(`${base}/Sharing/${id}`).expect(200)).body));
        const patched = await Promise.all(ids.map(async (id) => (await t.patch(`${base}/Sharing/${id}`, { name: `n ${Math.random()}` }).expect(200)).body));
        const pick = (records: Record<string, unknown>[]) => ids.map((id) => records.find((r) => r.id === id)).map((r) => [r?.available, r?.deleted]);
        return { list: pick(list), read: pick(read), patched: pick(patched) };
      };
      const all = (values: unknown[][]) => ({ list: values, read: values, patched: values });
      expect(await states()).toEqual(all([[true, false], [true, false], [true, false]]));
      // time passes validTill (the row is changed behind the API's back, as time does)
      await t.api.database.knex('sharing').where({ id: expiring.id }).update({ valid_till: '2001-01-01 00:00:00' });
      await request(t.server).get(new URL(limited.link).pathname).expect(200);
      await t.del(`${base}/File/${orphan.fileId}`).expect(200);
      expect(await states()).toEqual(all([[false, false], [false, false], [false, false]]));
      await t.post(`${base}/entityRestore`, { entityName: 'File', ids: [orphan.fileId] }).expect(200);
      expect((await t.get(`${base}/Sharing/${orphan.id}`).expect(200)).body).toMatchObject({ available: true, link: orphan.link });
      // what answers compute is never taken from a client, also not on create
      for (const field of ['available', 'link', 'viewLink']) {
        const res = await t.post(`${base}/Sharing`, { fileId: f.id, [field]: field === 'available' ? false : 'http://x' }).expect(400);
        expect({ field, code: res.body.error.code }).toEqual({ field, code: 'CORE_READ_ONLY_FIELD' });
      }
    });

    it('is created and changed by upsert, with links, and a change within the same second is Updated', async () => {
      const f = await upload(base, 'upserted.txt', 'u');
      const path = g === 'A' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
      const [created] = (await t.post(path, [{ entity: 'Sharing', payload: { fileId: f.id, name: 'first' } }]).expect(200)).body;
      expect(created).toMatchObject({ status: 'Created', stored: true, entity: { name: 'first', link: expect.stringMatching(/^http:\/\/files\.test\/sharings\/.+\.txt$/) } });
      const id = created.entity.id;
      const [renamed] = (await t.post(path, [{ entity: 'Sharing', payload: { id, name: 'second' } }]).expect(200)).body;
      expect(renamed).toMatchObject({ status: 'Updated', entity: { name: 'second' } });
      const [same] = (await t.post(path, [{ entity: 'Sharing', payload: { id, name: 'second' } }]).expect(200)).body;
      expect(same).toMatchObject({ status: 'NotModified', entity: { name: 'second' } });
    });

    it('answers 404 once the file is deleted, and refuses a sharing of an unknown file', async () => {
      const f = await upload(base, 'doomed.txt', 'x');
      const s = (await t.post(`${base}/Sharing`, { fileId: f.id }).expect(200)).body;
      await t.del(`${base}/File/${f.id}`).expect(200);
      await request(t.server).get(new URL(s.link).pathname).expect(404);
      expect((await t.post(`${base}/Sharing`, { fileId: 'nope' }).expect(400)).body.error).toMatchObject({ code: 'CORE_INVALID_LINK', details: { entity: 'File', field: 'fileId', ids: ['nope'] } });
      expect((await t.post(`${base}/Sharing`, {}).expect(400)).body.error.code).toBe('CORE_VALIDATION_FAILED');
      expect((await t.post(`${base}/Sharing`, [{ fileId: f.id }]).expect(400)).body.error.code).toBe('CORE_VALIDATION_FAILED');
    });

    it('throttles wrong passwords like sign-ins, even for the right one afterwards', async () => {
      const f = await upload(base, 'locked.txt', 'locked');
      const s = (await t.post(`${base}/Sharing`, { fileId: f.id, password: 'right' }).expect(200)).body;
      const path = new URL(s.link).pathname;
      for (let i = 0; i < 3; i++) await request(t.server).get(path).set('Sharing-Password', `wrong ${i}`).expect(401);
      const blocked = await request(t.server).get(path).set('Sharing-Password', 'right').expect(429);
      expect(blocked.body.error.code).toBe('CORE_TOO_MANY_REQUESTS');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect((await t.get(`${base}/Sharing/${s.id}`).expect(200)).body.used).toBe(0);
    });
  });
});
