import { createHash, randomBytes } from 'node:crypto';
import { GENERATIONS } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { LocalStorage } from '@entity-records/files';
import { binary, dataUrl, listFiles, pngOf, startFilesApi, type FilesTestApi } from './helpers';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A file cut into pieces of `size` bytes, as the reference client does. */
function cut(file: Buffer, size: number) {
  const pieces: { start: number; bytes: Buffer }[] = [];
  for (let start = 0; start < file.length; start += size) pieces.push({ start, bytes: file.subarray(start, start + size) });
  return pieces;
}

describe.each(TEST_DBS)('chunked upload on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    let n = 0;
    const ids = () => {
      n += 1;
      return { id: `f${g}${n}-${randomBytes(3).toString('hex')}`, fileUniqueHash: `h-${g}-${n}-${randomBytes(4).toString('hex')}` };
    };
    const chunk = (path: string, u: { id: string; fileUniqueHash: string }, name: string, piecesCount: number, p: { start: number; bytes: Buffer }) =>
      t.post(`${base}${path}`, { ...u, name, piecesCount, start: p.start, piece: dataUrl(p.bytes) });

    it('answers the offsets received, as sorted strings, and id and name once every piece is in', async () => {
      const file = randomBytes(5 * 1000 + 17);
      const pieces = cut(file, 1000);
      const u = ids();
      const order = [3, 0, 5, 1, 4, 2];
      const answers = [];
      for (const i of order) answers.push((await chunk('/File', u, 'data.bin', pieces.length, pieces[i]).expect(200)).body);
      expect(answers[0]).toEqual({ chunks: ['3000'] });
      expect(answers[1]).toEqual({ chunks: ['0', '3000'] });
      expect(answers[4]).toEqual({ chunks: ['0', '1000', '3000', '4000', '5000'] });
      expect(answers[5]).toEqual({ chunks: ['0', '1000', '2000', '3000', '4000', '5000'], id: u.id, name: 'data.bin' });
      const record = (await t.get(`${base}/File/${u.id}`).expect(200)).body;
      expect(record).toMatchObject({ id: u.id, name: 'data.bin', fileSize: file.length, hash: sha256(file), mimeType: 'application/octet-stream' });
      const down = await t.get(`${base}/File/${u.id}/download`).buffer(true).parse(binary).expect(200);
      expect(Buffer.compare(down.body, file)).toBe(0);
      // the pieces' objects are gone once the file exists
      const { upload_id: uploadId } = await t.api.database.knex('file_upload').where({ file_id: u.id }).first();
      expect(listFiles(t.storageDir).filter((f) => f.startsWith(`chunks/${uploadId}/`))).toEqual([]);
    });

    it('takes chunks at /File/createChunk too, all at once, and completes the file exactly once', async () => {
      const file = randomBytes(8 * 512);
      const pieces = cut(file, 512);
      const u = ids();
      const answers = await Promise.all(pieces.map((p) => chunk('/File/createChunk', u, 'all-at-once.bin', pieces.length, p).expect(200)));
      const completed = answers.filter((a) => a.body.id);
      expect(completed).toHaveLength(1);
      expect(completed[0].body).toEqual({ chunks: pieces.map((p) => String(p.start)), id: u.id, name: 'all-at-once.bin' });
      const files = (await t.get(`${base}/File?where[0][type]=equals&where[0][attribute]=id&where[0][value]=${u.id}`).expect(200)).body;
      expect(files.total).toBe(1);
      expect(files.list[0].hash).toBe(sha256(file));
    });

    it('treats a repeated chunk as received once, also after the file is complete', async () => {
      const file = randomBytes(3000);
      const pieces = cut(file, 1000);
      const u = ids();
      await chunk('/File', u, 'again.bin', 3, pieces[0]).expect(200);
      expect((await chunk('/File', u, 'again.bin', 3, pieces[0]).expect(200)).body).toEqual({ chunks: ['0'] });
      await chunk('/File', u, 'again.bin', 3, pieces[1]).expect(200);
      expect((await chunk('/File', u, 'again.bin', 3, pieces[2]).expect(200)).body).toMatchObject({ id: u.id });
      expect((await chunk('/File', u, 'again.bin', 3, pieces[2]).expect(200)).body).toEqual({ chunks: ['0', '1000', '2000'], id: u.id, name: 'again.bin' });
      expect((await t.get(`${base}/File/${u.id}`).expect(200)).body.fileSize).toBe(3000);
    });

    it('answers 409 for a chunk at the same offset with the same size but other bytes, before and after completion', async () => {
      const u = ids();
      const piece = (start: number, text: string) => ({ ...u, name: 'same.txt', piecesCount: 2, start, piece: dataUrl(text) });
      expect((await t.post(`${base}/File`, piece(0, 'AAAA')).expect(200)).body).toEqual({ chunks: ['0'] });
      expect((await t.post(`${base}/File`, piece(0, 'BBBB')).expect(409)).body.error.code).toBe('FILES_CHUNK_CONFLICT');
      expect((await t.post(`${base}/File`, piece(4, 'CCCC')).expect(200)).body).toEqual({ chunks: ['0', '4'], id: u.id, name: 'same.txt' });
      const down = await t.get(`${base}/File/${u.id}/download`).buffer(true).parse(binary).expect(200);
      expect(down.body.toString()).toBe('AAAACCCC');
      // the complete file still tells a repeat from other bytes
      expect((await t.post(`${base}/File`, piece(4, 'DDDD')).expect(409)).body.error.code).toBe('FILES_CHUNK_CONFLICT');
      expect((await t.post(`${base}/File`, piece(4, 'CCCC')).expect(200)).body).toEqual({ chunks: ['0', '4'], id: u.id, name: 'same.txt' });
    });

    it('compares a chunk recorded without a hash (by an earlier version) with its stored piece, or once complete with the file', async () => {
      const u = ids();
      const piece = (start: number, text: string) => ({ ...u, name: 'old.txt', piecesCount: 2, start, piece: dataUrl(text) });
      const forget = async () => {
        const { upload_id: uploadId } = await t.api.database.knex('file_upload').where({ file_id: u.id }).first();
        await t.api.database.knex('file_upload_chunk').where({ upload_id: uploadId }).update({ piece_hash: null });
      };
      await t.post(`${base}/File`, piece(0, 'AAAA')).expect(200);
      await forget();
      expect((await t.post(`${base}/File`, piece(0, 'BBBB')).expect(409)).body.error.code).toBe('FILES_CHUNK_CONFLICT');
      expect((await t.post(`${base}/File`, piece(0, 'AAAA')).expect(200)).body).toEqual({ chunks: ['0'] });
      expect((await t.post(`${base}/File`, piece(4, 'CCCC')).expect(200)).body.id).toBe(u.id);
      await forget();
      expect((await t.post(`${base}/File`, piece(4, 'DDDD')).expect(409)).body.error.code).toBe('FILES_CHUNK_CONFLICT');
      expect((await t.post(`${base}/File`, piece(4, 'CCCC')).expect(200)).body).toEqual({ chunks: ['0', '4'], id: u.id, name: 'old.txt' });
    });

    it('keeps exactly one of two chunks with other bytes arriving at once for the same offset, and the file holds its bytes', async () => {
      const u = ids();
      const [a, b] = [randomBytes(4096), randomBytes(4096)];
      const answers = await Promise.all([a, b].map((bytes) => chunk('/File', u, 'race.bin', 2, { start: 0, bytes })));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      const kept = answers[0].status === 200 ? a : b;
      const tail = randomBytes(10);
      expect((await chunk('/File', u, 'race.bin', 2, { start: 4096, bytes: tail }).expect(200)).body.id).toBe(u.id);
      const down = await t.get(`${base}/File/${u.id}/download`).buffer(true).parse(binary).expect(200);
      expect(Buffer.compare(down.body, Buffer.concat([kept, tail]))).toBe(0);
    });

    it('answers id and name to every copy of the last chunk, also those arriving while the file is being joined', async () => {
      for (let round = 0; round < 4; round++) {
        const u = ids();
        const pieces = cut(randomBytes(2 * 1024 * 1024), 1024 * 1024);
        await chunk('/File', u, 'joined.bin', 2, pieces[0]).expect(200);
        const answers = await Promise.all([0, 1, 2].map(() => chunk('/File', u, 'joined.bin', 2, pieces[1]).expect(200)));
        expect(answers.map((r) => r.body)).toEqual([0, 1, 2].map(() => ({ chunks: ['0', String(1024 * 1024)], id: u.id, name: 'joined.bin' })));
      }
    });

    it('answers 409 for overlapping bytes and for another name, piecesCount or id of the same fileUniqueHash', async () => {
      const u = ids();
      await chunk('/File', u, 'c.bin', 3, { start: 0, bytes: randomBytes(1000) }).expect(200);
      for (const p of [
        { start: 500, bytes: randomBytes(1000) },
        { start: 0, bytes: randomBytes(999) },
        { start: 999, bytes: randomBytes(10) },
      ]) {
        const res = await chunk('/File', u, 'c.bin', 3, p).expect(409);
        expect(res.body.error.code).toBe('FILES_CHUNK_CONFLICT');
      }
      const other = { start: 1000, bytes: randomBytes(1000) };
      expect((await chunk('/File', u, 'd.bin', 3, other).expect(409)).body.error.details).toEqual({ field: 'name' });
      expect((await chunk('/File', u, 'c.bin', 4, other).expect(409)).body.error.details).toEqual({ field: 'piecesCount' });
      expect((await chunk('/File', { ...u, id: `${u.id}x` }, 'c.bin', 3, other).expect(409)).body.error.details).toEqual({ field: 'id' });
      // nothing of the refused chunks was kept
      expect((await chunk('/File', u, 'c.bin', 3, other).expect(200)).body).toEqual({ chunks: ['0', '1000'] });
    });

    it('answers 409 at the first chunk whose id another File has, also a deleted one, keeping nothing', async () => {
      const live = (await t.post(`${base}/File`, { name: 'taken.txt', fileContents: dataUrl('taken') }).expect(200)).body;
      const gone = (await t.post(`${base}/File`, { name: 'gone.txt', fileContents: dataUrl('gone') }).expect(200)).body;
      await t.del(`${base}/File/${gone.id}`).expect(200);
      const pieces = () => listFiles(t.storageDir).filter((f) => f.startsWith('chunks/')).length;
      const before = pieces();
      for (const id of [live.id, gone.id]) {
        const u = { ...ids(), id };
        const res = await chunk('/File', u, 'late.bin', 2, { start: 0, bytes: randomBytes(100) }).expect(409);
        expect(res.body.error).toMatchObject({ code: 'CORE_UNIQUE_VIOLATION', details: { entity: 'File', fields: ['id'] } });
        expect(await t.api.database.knex('file_upload').where({ file_id: id })).toEqual([]);
      }
      expect(pieces()).toBe(before);
      expect((await t.get(`${base}/File/${live.id}`).expect(200)).body).toMatchObject({ name: 'taken.txt', fileSize: 5 });
    });

    it('never answers a finished upload whose File was deleted as complete: its chunks start afresh', async () => {
      const pieces = cut(randomBytes(2000), 1000);
      // Removed for good: the same chunks make the File again, with the same id.
      const removed = ids();
      await chunk('/File', removed, 'again.bin', 2, pieces[0]).expect(200);
      expect((await chunk('/File', removed, 'again.bin', 2, pieces[1]).expect(200)).body.id).toBe(removed.id);
      await t.del(`${base}/File/${removed.id}`).set('permanently', 'true').expect(200);
      expect((await chunk('/File', removed, 'again.bin', 2, pieces[0]).expect(200)).body).toEqual({ chunks: ['0'] });
      expect((await chunk('/File', removed, 'again.bin', 2, pieces[1]).expect(200)).body).toEqual({ chunks: ['0', '1000'], id: removed.id, name: 'again.bin' });
      expect((await t.get(`${base}/File/${removed.id}`).expect(200)).body).toMatchObject({ fileSize: 2000, hash: sha256(Buffer.concat(pieces.map((p) => p.bytes))) });

      // In the bin: its id stays taken (409, as for any new upload with that id); another id makes a new File.
      const binned = ids();
      await chunk('/File', binned, 'bin.bin', 2, pieces[0]).expect(200);
      await chunk('/File', binned, 'bin.bin', 2, pieces[1]).expect(200);
      await t.del(`${base}/File/${binned.id}`).expect(200);
      const res = await chunk('/File', binned, 'bin.bin', 2, pieces[1]).expect(409);
      expect(res.body.error).toMatchObject({ code: 'CORE_UNIQUE_VIOLATION', details: { entity: 'File', fields: ['id'] } });
      const next = { ...binned, id: `${binned.id}n` };
      expect((await chunk('/File', next, 'bin.bin', 2, pieces[1]).expect(200)).body).toEqual({ chunks: ['1000'] });
      expect((await chunk('/File', next, 'bin.bin', 2, pieces[0]).expect(200)).body).toEqual({ chunks: ['0', '1000'], id: next.id, name: 'bin.bin' });
      // The File in the bin is restored whole.
      await t.post(`${base}/entityRestore`, { entityName: 'File', ids: [binned.id] }).expect(200);
      const down = await t.get(`${base}/File/${binned.id}/download`).buffer(true).parse(binary).expect(200);
      expect(Buffer.compare(down.body, Buffer.concat(pieces.map((p) => p.bytes)))).toBe(0);
    });

    it('refuses a last piece that leaves a gap, and chunks past piecesCount', async () => {
      const u = ids();
      await chunk('/File', u, 'gap.bin', 2, { start: 0, bytes: randomBytes(100) }).expect(200);
      expect((await chunk('/File', u, 'gap.bin', 2, { start: 200, bytes: randomBytes(100) }).expect(409)).body.error.code).toBe('FILES_CHUNK_CONFLICT');
      await chunk('/File', u, 'gap.bin', 2, { start: 100, bytes: randomBytes(100) }).expect(200);
      expect((await chunk('/File', u, 'gap.bin', 2, { start: 200, bytes: randomBytes(100) }).expect(409)).body.error.code).toBe('FILES_CHUNK_CONFLICT');
    });

    it('measures an image sent in chunks, also when its name has no extension', async () => {
      const png = await pngOf(300, 150);
      for (const name of ['photo.png', 'photo']) {
        const u = ids();
        const pieces = cut(png, Math.ceil(png.length / 3));
        let last: Record<string, unknown> = {};
        for (const p of pieces) last = (await chunk('/File', u, name, pieces.length, p).expect(200)).body;
        expect(last.id).toBe(u.id);
        const record = (await t.get(`${base}/File/${u.id}`).expect(200)).body;
        expect({ name, ...record }).toMatchObject({ name, mimeType: 'image/png', width: 300, height: 150 });
        await t.get(`${base}/File/${u.id}/thumbnail/small`).expect(200);
      }
    });

    it('answers 400 for a chunk without id or with an id outside the pattern, with a bad start or piecesCount, or with bad base64', async () => {
      const u = ids();
      const good = { ...u, name: 'x.bin', piecesCount: 2, start: 0, piece: dataUrl('abc') };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...good, id: undefined }, 'CORE_VALIDATION_FAILED'],
        // an id outside [A-Za-z0-9_-]{1,64} is refused as on every create (base64, URL, records)
        [{ ...good, id: 'a.b' }, 'CORE_INVALID_ID'],
        [{ ...good, id: '' }, 'CORE_INVALID_ID'],
        [{ ...good, id: 'x'.repeat(65) }, 'CORE_INVALID_ID'],
        [{ ...good, start: -1 }, 'CORE_VALIDATION_FAILED'],
        [{ ...good, start: 1.5 }, 'CORE_VALIDATION_FAILED'],
        [{ ...good, piecesCount: 0 }, 'CORE_VALIDATION_FAILED'],
        [{ ...good, fileUniqueHash: '' }, 'CORE_VALIDATION_FAILED'],
        [{ ...good, piece: 'data:application/octet-stream;base64,ab$c' }, 'FILES_CONTENT_INVALID'],
        [{ ...good, piece: 'YWJj' }, 'FILES_CONTENT_INVALID'],
        [{ ...good, name: '../x.bin' }, 'FILES_NAME_INVALID'],
        [{ ...good, colour: 'red' }, 'CORE_UNKNOWN_FIELD'],
        [{ ...good, hash: 'f'.repeat(64) }, 'CORE_READ_ONLY_FIELD'],
        [{ ...good, mimeType: 'text/html' }, 'CORE_READ_ONLY_FIELD'],
      ];
      for (const [body, code] of cases) {
        const res = await t.post(`${base}/File`, body).expect(400);
        expect({ body, code: res.body.error.code }).toEqual({ body, code });
      }
      expect(await t.api.database.knex('file_upload').where({ file_id: u.id })).toEqual([]);
      expect((await t.post(`${base}/File`, good).expect(200)).body).toEqual({ chunks: ['0'] });
    });

    it('refuses start and piecesCount sent as strings, and a chunk that also carries fileContents or url, at both chunk routes', async () => {
      const u = ids();
      const good = { ...u, name: 'typed.bin', piecesCount: 2, start: 0, piece: dataUrl('abc') };
      const cases: [Record<string, unknown>, string, string[]][] = [
        [{ ...good, start: '0' }, 'CORE_VALIDATION_FAILED', ['start']],
        [{ ...good, piecesCount: '2' }, 'CORE_VALIDATION_FAILED', ['piecesCount']],
        [{ ...good, start: '0', piecesCount: '2' }, 'CORE_VALIDATION_FAILED', ['piecesCount']],
        [{ ...good, fileContents: dataUrl('abc') }, 'FILES_CONTENT_INVALID', ['fileContents']],
        [{ ...good, url: 'http://example.invalid/typed.bin' }, 'FILES_CONTENT_INVALID', ['url']],
      ];
      for (const path of ['/File', '/File/createChunk']) {
        for (const [body, code, issuePath] of cases) {
          const { error } = (await t.post(`${base}${path}`, body).expect(400)).body;
          expect({ path, body, code: error.code, issuePath: error.details.issues?.[0]?.path }).toEqual({ path, body, code, issuePath });
        }
      }
      expect(await t.api.database.knex('file_upload').where({ file_id: u.id })).toEqual([]);
      // A body with any chunk field is a chunk: the other method's key is the one named.
      const mixed = (await t.post(`${base}/File`, { name: 'mixed.txt', fileContents: dataUrl('abc'), start: 0 }).expect(400)).body.error;
      expect({ code: mixed.code, paths: mixed.details.issues.map((i: { path: string[] }) => i.path) }).toEqual({ code: 'FILES_CONTENT_INVALID', paths: [['fileContents']] });
      expect((await t.post(`${base}/File`, { name: 'mixed.txt', url: 'http://example.invalid/x', piecesCount: 1 }).expect(400)).body.error.code).toBe('FILES_CONTENT_INVALID');
      expect((await t.post(`${base}/File`, good).expect(200)).body).toEqual({ chunks: ['0'] });
    });
  });
});

describe.each(TEST_DBS)('chunked upload limits on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, { maxFileSize: 2500, chunkExpiryHours: 1 });
  });
  afterAll(() => t.close());

  it('answers 413 for a chunk that ends past maxFileSize, and keeps nothing of it', async () => {
    const u = { id: 'big', fileUniqueHash: 'big-hash' };
    await t.post('/api/File', { ...u, name: 'big.bin', piecesCount: 3, start: 0, piece: dataUrl(randomBytes(1000)) }).expect(200);
    const res = await t.post('/api/File', { ...u, name: 'big.bin', piecesCount: 3, start: 2000, piece: dataUrl(randomBytes(1000)) }).expect(413);
    expect(res.body.error.code).toBe('FILES_TOO_LARGE');
    expect(listFiles(t.storageDir).filter((f) => f.startsWith('chunks/'))).toHaveLength(1);
  });

  it('removes incomplete uploads after the expiry, with their stored pieces', async () => {
    const u = { id: 'old', fileUniqueHash: 'old-hash' };
    await t.post('/api/v1/File', { ...u, name: 'old.bin', piecesCount: 2, start: 0, piece: dataUrl(randomBytes(100)) }).expect(200);
    const before = listFiles(t.storageDir).filter((f) => f.startsWith('chunks/')).length;
    // two hours pass for this upload
    await t.api.database.knex('file_upload').update({ touched_at: Date.now() - 2 * 3_600_000 });
    // a new chunk of the expired upload starts it afresh: the old piece is not counted
    expect((await t.post('/api/v1/File', { ...u, name: 'old.bin', piecesCount: 2, start: 100, piece: dataUrl(randomBytes(100)) }).expect(200)).body).toEqual({ chunks: ['100'] });
    expect(listFiles(t.storageDir).filter((f) => f.startsWith('chunks/')).length).toBe(before);
  });
});

describe.each(TEST_DBS)('expiry sweep on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    // 1.8 s: the sweep runs that often too
    t = await startFilesApi(kind, { chunkExpiryHours: 0.0005 });
  });
  afterAll(() => t.close());

  it('removes incomplete uploads and their pieces once they expire, and keeps complete files', async () => {
    await t.post('/api/File', { id: 'left', fileUniqueHash: 'left-hash', name: 'left.bin', piecesCount: 2, start: 0, piece: dataUrl(randomBytes(100)) }).expect(200);
    await t.post('/api/File', { id: 'whole', fileUniqueHash: 'whole-hash', name: 'whole.bin', piecesCount: 1, start: 0, piece: dataUrl('whole') }).expect(200);
    expect(listFiles(t.storageDir).filter((f) => f.startsWith('chunks/'))).toHaveLength(1);
    const uploads = async () => Number((await t.api.database.knex('file_upload').count({ n: '*' }).first())?.n);
    const pieces = () => listFiles(t.storageDir).filter((f) => f.startsWith('chunks/'));
    // rows go first, then their objects
    for (let i = 0; i < 100 && ((await uploads()) > 0 || pieces().length > 0); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await uploads()).toBe(0);
    expect(pieces()).toEqual([]);
    const whole = await t.get('/api/File/whole/download').buffer(true).parse(binary).expect(200);
    expect(whole.body.toString()).toBe('whole');
  });
});

/** A local storage that holds (and may fail) the next write of a file's contents until told. */
class HeldStorage extends LocalStorage {
  private held?: { entered: () => void; open: Promise<void>; fail: boolean };

  /** Holds the next write under `files/`; resolves once it is waiting, with the function that lets it go on. */
  holdNext(fail: boolean): Promise<() => void> {
    let go = () => undefined as void;
    const open = new Promise<void>((resolve) => (go = resolve));
    return new Promise((resolve) => (this.held = { entered: () => resolve(go), open, fail }));
  }

  override async write(key: string, source: Readable | Buffer): Promise<number> {
    const held = key.startsWith('files/') ? this.held : undefined;
    if (held) {
      this.held = undefined;
      held.entered();
      await held.open;
      if (held.fail) {
        if (!Buffer.isBuffer(source)) source.destroy();
        throw new Error('storage unavailable');
      }
    }
    return super.write(key, source);
  }
}

describe.each(TEST_DBS)('a last chunk while the pieces are being joined on %s', (kind) => {
  let t: FilesTestApi;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-held-'));
  const storage = new HeldStorage(dir);
  beforeAll(async () => {
    // 0.3 s: a claim this old counts as the claim of a process that died
    t = await startFilesApi(kind, { storage, assemblyTimeoutMinutes: 0.005 });
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const send = (u: { id: string; fileUniqueHash: string }, start: number, text: string) =>
    t.post('/api/File', { ...u, name: `${u.id}.txt`, piecesCount: 2, start, piece: dataUrl(text) });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('waits for the request joining them and, when that one fails, joins them itself and answers id and name', async () => {
    const u = { id: `failing-${kind}`, fileUniqueHash: `failing-${kind}` };
    await send(u, 0, 'AAAA').expect(200);
    const held = storage.holdNext(true);
    const first = send(u, 4, 'CCCC').then((r) => r);
    const go = await held;
    const again = send(u, 4, 'CCCC').then((r) => r);
    await sleep(150).finally(go);
    expect((await first).status).toBe(500);
    expect((await again).body).toEqual({ chunks: ['0', '4'], id: u.id, name: `${u.id}.txt` });
    const down = await t.get(`/api/File/${u.id}/download`).buffer(true).parse(binary).expect(200);
    expect(down.body.toString()).toBe('AAAACCCC');
  });

  it('takes the joining over once its claim is stale, and answers id and name', async () => {
    const u = { id: `stale-${kind}`, fileUniqueHash: `stale-${kind}` };
    await send(u, 0, 'AAAA').expect(200);
    const held = storage.holdNext(false);
    const first = send(u, 4, 'CCCC').then((r) => r);
    const go = await held;
    const again = await Promise.resolve(send(u, 4, 'CCCC')).finally(go);
    expect(again.body).toEqual({ chunks: ['0', '4'], id: u.id, name: `${u.id}.txt` });
    // the request whose process was taken for dead finds the file made
    expect((await first).body.error.code).toBe('CORE_UNIQUE_VIOLATION');
    expect((await send(u, 4, 'CCCC').expect(200)).body).toEqual({ chunks: ['0', '4'], id: u.id, name: `${u.id}.txt` });
    const down = await t.get(`/api/File/${u.id}/download`).buffer(true).parse(binary).expect(200);
    expect(down.body.toString()).toBe('AAAACCCC');
  });
});
