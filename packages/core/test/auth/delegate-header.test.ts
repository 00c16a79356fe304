import request from 'supertest';
import { ADMIN, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const SESSION_PATHS = [
  ['A', '/api/userSession', '/api'],
  ['B', '/api/v1/App/user', '/api/v1'],
] as const;

/**
 * `Authorization-Delegate` opens a delegated session on a sign-in with the admin's own credentials
 * (CONTRACT §3). Sent with a token or the session cookie instead, the header was ignored: the
 * answer gave back the caller's own token, so a client asking for a token that acts for a user
 * got one with the admin's rights (and a non-admin got 200, not 403). It is 400 there now.
 */
describe.each(TEST_DBS)('Authorization-Delegate without credentials on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    const role = (await t.post('/api/Role', { name: 'Brand reader', scopes: { Brand: { read: 'all' } } }).expect(200)).body.id;
    await t.post('/api/User', { userName: 'erin', password: 'erin-pass-1', rolesIds: [role] }).expect(200);
  });
  afterAll(() => t.close());

  describe.each(SESSION_PATHS)('generation %s', (_g, path, base) => {
    it('refuses the header on a session read with a token (400), and issues nothing', async () => {
      const tokens = async () => Number((await t.api.database.knex('auth_token').count({ n: '*' }))[0].n);
      const before = await tokens();
      for (const extra of [{ 'Authorization-Token-Only': 'true' }, {}]) {
        const res = await request(t.server).get(path).set('Authorization-Token', t.token).set('Authorization-Delegate', 'erin').set(extra);
        expect([res.status, res.body.error?.code, res.body.authorizationToken]).toEqual([400, 'CORE_VALIDATION_FAILED', undefined]);
        expect(res.body.error.details.issues).toEqual([expect.objectContaining({ path: ['Authorization-Delegate'] })]);
      }
      const erin = (await request(t.server).get('/api/userSession').auth('erin', 'erin-pass-1').set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken;
      const asErin = await request(t.server).get(path).set('Authorization-Token', erin).set('Authorization-Delegate', ADMIN.userName);
      expect([asErin.status, asErin.body.error?.code]).toEqual([400, 'CORE_VALIDATION_FAILED']);
      expect(await tokens()).toBe(before + 1);
      // The token is checked first: a bad one is 401 whatever the header says.
      await request(t.server).get(path).set('Authorization-Token', 'nope').set('Authorization-Delegate', 'erin').expect(401);
      // Without the header, a session read answers as before; with Basic credentials, delegation works.
      await request(t.server).get(path).set('Authorization-Token', t.token).expect(200);
      const delegated = await request(t.server).get(path).auth(ADMIN.userName, ADMIN.password).set('Authorization-Delegate', 'erin').expect(200);
      expect([delegated.body.user.userName, delegated.body.actor.userName]).toEqual(['erin', ADMIN.userName]);
      await request(t.server).get(`${base}/Brand`).set('Authorization-Token', delegated.body.authorizationToken).expect(200);
    });

    it('refuses the header on a session read with the cookie (400)', async () => {
      const signIn = await request(t.server).post(`${path}/cookie`).send({ userName: ADMIN.userName, password: ADMIN.password }).expect(200);
      const cookie = String(signIn.headers['set-cookie']).split(';')[0];
      const res = await request(t.server).get(path).set('Cookie', cookie).set('Authorization-Delegate', 'erin');
      expect([res.status, res.body.error?.code]).toEqual([400, 'CORE_VALIDATION_FAILED']);
      await request(t.server).get(path).set('Cookie', cookie).expect(200);
    });
  });
});
