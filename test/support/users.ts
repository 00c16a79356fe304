import request from 'supertest';
import { requestsTo, type Requests, type TestApi } from './api';

type Scopes = Record<string, Record<string, unknown>>;

/** Requests sent with one user's token. */
export interface UserClient extends Requests {
  user: { id: string; userName: string };
  token: string;
}

/** A client sending requests with this token. */
export function clientFor(t: TestApi, token: string, user: UserClient['user']): UserClient {
  return { user, token, ...requestsTo(t.server, (test) => test.set('Authorization-Token', token)) };
}

let users = 0;

/** A new user holding one new role with these scopes (and field restrictions), signed in. */
export async function userWithRole(t: TestApi, role: { scopes: Scopes; fields?: Scopes }): Promise<UserClient> {
  users += 1;
  const userName = `user${users}_${Date.now()}`;
  const roleId = (await t.post('/api/Role', { name: `role of ${userName}`, ...role }).expect(200)).body.id;
  const user = (await t.post('/api/User', { userName, name: `User ${users}`, password: 'pw-123456', rolesIds: [roleId] }).expect(200)).body;
  const session = await request(t.server).get('/api/userSession').auth(userName, 'pw-123456').set('Authorization-Token-Only', 'true').expect(200);
  return clientFor(t, session.body.authorizationToken, user);
}

/** A token of the admin acting for `userName` (delegated session). */
export async function delegatedToken(t: TestApi, adminUserName: string, adminPassword: string, userName: string): Promise<string> {
  const res = await request(t.server)
    .get('/api/userSession')
    .auth(adminUserName, adminPassword)
    .set('Authorization-Delegate', userName)
    .set('Authorization-Token-Only', 'true')
    .expect(200);
  return res.body.authorizationToken;
}
