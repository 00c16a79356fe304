import request from 'supertest';
import sharing from '@entity-records/sharing';
import { TEST_DBS } from '../../../test/support/databases';
import { binary, dataUrl, startFilesApi, type FilesTestApi } from '../../files/test/helpers';

/** A header value as a client sends text: its UTF-8 bytes (Node hands them on one byte a character). */
const utf8Bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

/**
 * A sharing password set in JSON (UTF-8) is asked for in the `Sharing-Password` header. Node reads
 * header bytes one a character, so a password that is not ASCII never matched in the header (401,
 * counted as a failure towards the throttle), while the same password posted as a form worked.
 */
describe.each(TEST_DBS)('Sharing-Password that is not ASCII on %s', (kind) => {
  let t: FilesTestApi;
  beforeAll(async () => {
    t = await startFilesApi(kind, {}, { plugins: [sharing] });
  });
  afterAll(() => t.close());

  it('opens the link with the password sent in UTF-8, as the posted form does', async () => {
    const file = (await t.post('/api/File', { name: 'umlaut.txt', fileContents: dataUrl('umlaut', 'text/plain') }).expect(200)).body;
    for (const password of ['pässwörd', 'пароль-秘密']) {
      const share = (await t.post('/api/Sharing', { fileId: file.id, password }).expect(200)).body;
      const path = new URL(share.link).pathname;
      const header = await request(t.server).get(path).set('Sharing-Password', utf8Bytes(password)).buffer(true).parse(binary);
      expect([header.status, header.body.toString()]).toEqual([200, 'umlaut']);
      const form = await request(t.server).post(path).type('form').send({ password }).buffer(true).parse(binary);
      expect([form.status, form.body.toString()]).toEqual([200, 'umlaut']);
      await request(t.server).get(path).set('Sharing-Password', utf8Bytes(`${password}x`)).expect(401);
    }
  });
});
