import request from 'supertest';
import { ADMIN, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const SESSION_PATHS = [
  ['A', '/api/userSession', '/api'],
  ['B', '/api/v1/App/user', '/api/v1'],
] as const;

/** A header value as a client sends text: its UTF-8 bytes (Node hands them on one byte a character). */
const utf8Bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

/**
 * `Authorization-Delegate: <userName>` names a user as Basic credentials do: in UTF-8. Node reads
 * header bytes one a character, so `jürgen` arrived as `jÃ¼rgen`: a user whose name is not ASCII
 * could sign in but could not be acted for (404), and the answer showed the name garbled.
 */
describe.each(TEST_DBS)('Authorization-Delegate with a name that is not ASCII on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    const role = (await t.post('/api/Role', { name: 'Brand reader', scopes: { Brand: { read: 'all' } } }).expect(200)).body.id;
    for (const userName of ['jürgen', '山田']) await t.post('/api/User', { userName, password: 'utf8-pass-1', rolesIds: [role] }).expect(200);
  });
  afterAll(() => t.close());

  describe.each(SESSION_PATHS)('generation %s', (_g, path, base) => {
    it.each(['jürgen', '山田'])('acts for %s named in UTF-8', async (userName) => {
      const res = await request(t.server).get(path).auth(ADMIN.userName, ADMIN.password).set('Authorization-Delegate', utf8Bytes(userName)).expect(200);
      expect([res.body.user.userName, res.body.actor.userName]).toEqual([userName, ADMIN.userName]);
      await request(t.server).get(`${base}/Brand`).set('Authorization-Token', res.body.authorizationToken).expect(200);
    });

    it('names an unknown user as sent (404), and still reads a name sent one byte a character', async () => {
      const unknown = await request(t.server).get(path).auth(ADMIN.userName, ADMIN.password).set('Authorization-Delegate', utf8Bytes('jörg'));
      expect([unknown.status, unknown.body.error?.details]).toEqual([404, { entity: 'User', userName: 'jörg' }]);
      // Bytes that are no UTF-8 are read as before: one a character (ISO-8859-1).
      const latin1 = await request(t.server).get(path).auth(ADMIN.userName, ADMIN.password).set('Authorization-Delegate', 'j\u00fcrgen').expect(200);
      expect(latin1.body.user.userName).toBe('jürgen');
    });
  });
});
