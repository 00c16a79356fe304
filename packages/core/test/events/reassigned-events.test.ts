import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { defineEntity } from '@entity-records/core';
import { openSse, type SseClient, type SseEvent } from '../../../../test/support/sse';
import { userWithRole, type UserClient } from '../../../../test/support/users';

jest.setTimeout(60_000);

type Data = { seq: number; entityType: string; recordId: string; action: string; diff: Record<string, { was: unknown; became: unknown }> };
const data = (e: SseEvent): Data => JSON.parse(e.data) as Data;

describe.each(TEST_DBS)('events of a record that changes hands on %s', (kind) => {
  const Task = defineEntity({ name: 'Task', fields: { name: { type: 'varchar', required: true }, note: { type: 'varchar' }, assignedUser: { type: 'link', entity: 'User' } } });
  let t: TestApi;
  let url: string;
  let server: http.Server;
  let before: UserClient;
  let after: UserClient;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Task] });
    server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const role = { scopes: { Task: { read: 'own', edit: 'own', create: true, stream: true } } };
    [before, after] = [await userWithRole(t, role), await userWithRole(t, role)];
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await t.close();
  });

  const open = async (token: string) => {
    const es = await openSse(`${url}/api/events?entityName=Task`, { 'Authorization-Token': token });
    clients.push(es);
    return es;
  };

  const values = (to: string) => ({ assignedUserId: to, note: 'secret of the new one' });
  const routes: [string, (id: string, to: string) => Promise<unknown>][] = [
    ...GENERATIONS.flatMap(([g, base]): [string, (id: string, to: string) => Promise<unknown>][] => [
      [`PATCH ${g}`, (id, to) => t.patch(`${base}/Task/${id}`, values(to)).expect(200)],
      [`PUT ${g}`, (id, to) => t.put(`${base}/Task/${id}`, values(to)).expect(200)],
      [`PATCH ${g}, the assignee alone`, (id, to) => t.patch(`${base}/Task/${id}`, { assignedUserId: to }).expect(200)],
      [`entityMassUpdate ${g}`, (id, to) => t.post(`${base}/entityMassUpdate`, { entityName: 'Task', ids: [id], values: values(to) }).expect(200)],
    ]),
    ['upsert', (id, to) => t.post('/api/upsert', [{ entity: 'Task', payload: { id, ...values(to) } }]).expect(200)],
  ];

  /**
   * Who may see a change is judged on the record as the write left it (CONTRACT §16: read access
   * to the record), on every write route: the former assignee may no longer read what the write
   * stored, the new one may.
   */
  it.each(routes)('%s: the change that hands a record over goes to its new assignee, not its former one', async (_route, reassign) => {
    const id = (await t.post('/api/Task', { name: 'Handed over', assignedUserId: before.user.id }).expect(200)).body.id as string;
    const [esBefore, esAfter, esAdmin] = [await open(before.token), await open(after.token), await open(t.token)];
    await reassign(id, after.user.id);
    const marker = (await t.post('/api/Task', { name: 'Marker', assignedUserId: null }).expect(200)).body.id as string;
    await esAdmin.next((e) => data(e).recordId === marker);
    // each sees a record of its own made after it: once that event is in, so is the one before
    for (const user of [before, after]) {
      const mine = (await t.post('/api/Task', { name: 'Mine', assignedUserId: user.user.id }).expect(200)).body.id as string;
      await (user === before ? esBefore : esAfter).next((e) => data(e).recordId === mine);
    }
    const of = (es: SseClient) => es.events.map(data).filter((d) => d.recordId === id);
    expect(of(esAfter).map((d) => d.diff.assignedUserId)).toEqual([{ was: before.user.id, became: after.user.id }]);
    expect(of(esBefore)).toEqual([]);
    // the stream route agrees
    await before.get(`/api/v1/Task/${id}/stream`).expect(404);
    expect((await after.get(`/api/v1/Task/${id}/stream`).expect(200)).body.total).toBe(2);
  });
});
