import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/**
 * A password change revokes the user's tokens (CONTRACT §3) once it is stored; a change that is
 * refused (409 unique, 412 If-Match, 400 link, an upsert item `Failed`) changes nothing, the
 * tokens included. They were revoked before the write was tried.
 */
describe.each(TEST_DBS)('a refused password change on %s', (kind) => {
  let t: TestApi;
  let roleId: string;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    roleId = (await t.post('/api/Role', { name: 'Brand reader', scopes: { Brand: { read: 'all' } } }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  const signIn = async (userName: string, password: string) =>
    (await request(t.server).get('/api/userSession').auth(userName, password).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken as string;
  const works = async (token: string) => (await request(t.server).get('/api/Brand').set('Authorization-Token', token)).status;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    const update = (id: string, body: object) => (base === '/api' ? t.patch(`${base}/User/${id}`, body) : t.put(`${base}/User/${id}`, body));

    it('keeps the tokens and the password when the change is refused, and revokes them when it is stored', async () => {
      const userName = `dora${base.length}`;
      const user = (await t.post(`${base}/User`, { userName, password: 'dora-pass-1', rolesIds: [roleId] }).expect(200)).body;
      const token = await signIn(userName, 'dora-pass-1');
      const refused = [
        await update(user.id, { password: 'dora-pass-2', userName: 'admin' }),
        await (base === '/api' ? t.patch(`${base}/User/${user.id}`, { password: 'dora-pass-2' }) : t.put(`${base}/User/${user.id}`, { password: 'dora-pass-2' })).set('If-Match', '"other"'),
        await update(user.id, { password: 'dora-pass-2', rolesIds: ['no-such-role'] }),
      ];
      expect(refused.map((res) => [res.status, res.body.error?.code])).toEqual([
        [409, 'CORE_UNIQUE_VIOLATION'],
        [412, 'CORE_PRECONDITION_FAILED'],
        [400, 'CORE_INVALID_LINK'],
      ]);
      const upsert = await t.post(`${base}/upsert`, [{ entity: 'User', payload: { id: user.id, password: 'dora-pass-2', userName: 'admin' } }]).expect(200);
      expect(upsert.body).toEqual([expect.objectContaining({ status: 'Failed', stored: false })]);
      expect(await works(token)).toBe(200);
      await signIn(userName, 'dora-pass-1');

      await update(user.id, { password: 'dora-pass-2' }).expect(200);
      expect(await works(token)).toBe(401);
      await request(t.server).get('/api/userSession').auth(userName, 'dora-pass-1').expect(401);
      // The other writes of a password revoke as well, once stored.
      const second = await signIn(userName, 'dora-pass-2');
      await t.post(`${base}/entityMassUpdate`, { entityName: 'User', ids: [user.id], values: { password: 'dora-pass-3' } }).expect(200);
      expect(await works(second)).toBe(401);
      const third = await signIn(userName, 'dora-pass-3');
      const stored = await t.post(`${base}/upsert`, [{ entity: 'User', payload: { id: user.id, password: 'dora-pass-4' } }]).expect(200);
      expect(stored.body).toEqual([expect.objectContaining({ status: 'Updated' })]);
      expect(await works(third)).toBe(401);
      await signIn(userName, 'dora-pass-4');
    });
  });
});
