import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import request from 'supertest';
import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { defineEntity } from '@entity-records/core';
import { openSse, type SseClient, type SseEvent } from '../../../../test/support/sse';
import { userWithRole } from '../../../../test/support/users';

jest.setTimeout(60_000);

type Data = { seq: number; entityType: string; recordId: string; action: string; diff: Record<string, { was: unknown; became: unknown }>; userId: string | null; createdAt: string };
const DATA_KEYS = ['action', 'createdAt', 'diff', 'entityType', 'recordId', 'seq', 'userId'];
const data = (e: SseEvent): Data => JSON.parse(e.data) as Data;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An instance of the tests below, served on a loopback port (server-sent events need a real connection). */
async function served(kind: 'sqlite' | 'postgres', options: Parameters<typeof startTestApi>[1]): Promise<{ t: TestApi; url: string; close(): Promise<void> }> {
  const t = await startTestApi(kind, options);
  // Room for long query strings, as the example server leaves (repeated filters).
  const server = http.createServer({ maxHeaderSize: 256 * 1024 }, t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    t,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await t.close();
    },
  };
}

/** Server-sent events: `GET /api/events` and `/api/v1/events` (CONTRACT §16). */
describe.each(TEST_DBS)('server-sent events on %s', (kind) => {
  let s: Awaited<ReturnType<typeof served>>;
  let t: TestApi;
  let adminId: string;
  const clients: SseClient[] = [];

  beforeAll(async () => {
    s = await served(kind, { entities: testEntities });
    t = s.t;
    adminId = (await t.get('/api/v1/App/user').expect(200)).body.user.id;
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(() => s.close());

  /** Opens a stream (closed after the test). */
  const open = async (path: string, headers: Record<string, string> = { 'Authorization-Token': t.token }) => {
    const client = await openSse(`${s.url}${path}`, headers);
    clients.push(client);
    return client;
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('streams text/event-stream: one event per change, id the seq, event the action, data with exactly the keys of the contract', async () => {
      const es = await open(`${base}/events`);
      expect(es.status).toBe(200);
      expect(es.headers['content-type']).toMatch(/^text\/event-stream/);
      const id = (await t.post(`${base}/Product`, { name: 'Evented', price: 1 }).expect(200)).body.id;
      await t.patch(`${base}/Product/${id}`, { price: 2 }).expect(200);
      await t.del(`${base}/Product/${id}`).expect(200);
      const deleted = await es.next((e) => e.event === 'Delete' && data(e).recordId === id);
      const mine = es.events.filter((e) => data(e).recordId === id);
      expect(mine.map((e) => e.event)).toEqual(['Create', 'Update', 'Delete']);
      expect(mine.at(-1)).toBe(deleted);
      for (const e of mine) {
        const d = data(e);
        expect(Object.keys(d).sort()).toEqual(DATA_KEYS);
        expect(e.id).toBe(String(d.seq));
        expect(d).toMatchObject({ entityType: 'Product', recordId: id, action: e.event, userId: adminId, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) });
      }
      expect(data(mine[1]).diff).toEqual({ price: { was: 1, became: 2 } });
      const seqs = mine.map((e) => data(e).seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    });

    it('answers 404 for an entity type the instance does not have, before the stream opens', async () => {
      const res = await t.get(`${base}/events?entityName=Brand,Nope`).expect(404);
      expect(res.body.error).toMatchObject({ code: 'CORE_NOT_FOUND', details: { entity: 'Nope' } });
    });

    it('answers HEAD at once with the headers of the stream, and refuses it as GET is refused', async () => {
      const head = await request(s.url).head(`${base}/events?entityName=Brand`).set('Authorization-Token', t.token).timeout(5000).expect(200);
      expect(head.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect((await request(s.url).head(`${base}/events?entityName=Nope`).set('Authorization-Token', t.token).timeout(5000)).status).toBe(404);
      expect((await request(s.url).head(`${base}/events`).timeout(5000)).status).toBe(401);
    });

    it('filters by entityName and id, each a comma list', async () => {
      const [b1, b2, b3] = [await brand(), await brand(), await brand()];
      const byType = await open(`${base}/events?entityName=Category,Brand`);
      const byId = await open(`${base}/events?id=${b1},${b3}`);
      const both = await open(`${base}/events?entityName=Product&id=${b1}`);
      const p = (await t.post('/api/Product', { name: 'Filtered' }).expect(200)).body.id;
      const c = (await t.post('/api/Category', { name: 'Filtered', code: `filtered-${base}` }).expect(200)).body.id;
      for (const b of [b1, b2, b3]) await t.patch(`/api/Brand/${b}`, { code: 'x' }).expect(200);
      const last = (await t.post('/api/Brand', { name: `Last ${base}` }).expect(200)).body.id;
      await byType.next((e) => data(e).recordId === last);
      expect(byType.events.map((e) => data(e).recordId)).toEqual([c, b1, b2, b3, last]);
      await byId.next((e) => data(e).recordId === b3);
      expect(byId.events.map((e) => data(e).recordId)).toEqual([b1, b3]);
      // entityName Product and id of a brand: nothing matches both
      await sleep(300);
      expect(both.events).toEqual([]);
      expect(p).toEqual(expect.any(String));
    });

    it('filters by entityName and id sent as repeated parameters, however many; a filter that is no list is 400', async () => {
      const [b1, b2] = [await brand(), await brand()];
      // Past 1,000 repeats the query parser answers an object, not a list: still the same filter.
      const repeated = (name: string, values: string[]) => values.map((v) => `${name}=${v}`).join('&');
      const others = Array.from({ length: 1000 }, (_, i) => `none-${i}`);
      const byIds = await open(`${base}/events?${repeated('id', [b1, ...others])}`);
      const byTypes = await open(`${base}/events?${repeated('entityName', Array.from({ length: 1001 }, () => 'Category'))}`);
      expect([byIds.status, byTypes.status]).toEqual([200, 200]);
      for (const b of [b2, b1]) await t.patch(`/api/Brand/${b}`, { code: `repeated ${base}` }).expect(200);
      const c = (await t.post('/api/Category', { name: 'Repeated', code: `repeated-${base}` }).expect(200)).body.id;
      await byIds.next((e) => data(e).recordId === b1);
      await byTypes.next((e) => data(e).recordId === c);
      expect(byIds.events.map((e) => data(e).recordId)).toEqual([b1]);
      expect(byTypes.events.map((e) => data(e).recordId)).toEqual([c]);
      const unknown = await t.get(`${base}/events?${repeated('entityName', Array.from({ length: 1001 }, () => 'Nope'))}`).expect(404);
      expect(unknown.body.error).toMatchObject({ code: 'CORE_NOT_FOUND', details: { entity: 'Nope' } });
      for (const query of ['entityName[x]=Brand', 'id[x]=abc', 'id[x][y]=abc']) {
        const res = await t.get(`${base}/events?${query}`).expect(400).expect('Content-Type', /^application\/json/);
        expect({ query, code: res.body.error.code }).toEqual({ query, code: 'CORE_INVALID_QUERY' });
      }
    });

    it('replays the changes after Last-Event-ID in order, then streams the new ones', async () => {
      const first = await open(`${base}/events?entityName=Brand`);
      const b = await brand();
      const seen = await first.next((e) => data(e).recordId === b);
      first.close();
      // missed while disconnected
      for (let i = 1; i <= 5; i++) await t.patch(`/api/Brand/${b}`, { code: `c${i}` }).expect(200);
      const again = await open(`${base}/events?entityName=Brand`, { 'Authorization-Token': t.token, 'Last-Event-ID': seen.id as string });
      await again.next((e) => data(e).diff.code?.became === 'c5');
      await t.patch(`/api/Brand/${b}`, { code: 'live' }).expect(200);
      await again.next((e) => data(e).diff.code?.became === 'live');
      const codes = again.events.filter((e) => data(e).recordId === b).map((e) => data(e).diff.code.became);
      expect(codes).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'live']);
      const seqs = again.events.map((e) => Number(e.id));
      expect(seqs[0]).toBeGreaterThan(Number(seen.id));
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      expect(new Set(seqs).size).toBe(seqs.length);
    });

    it('a Last-Event-ID past every change written (a log restored, a made-up id) replays nothing and streams the new changes', async () => {
      const first = await open(`${base}/events?entityName=Brand`);
      const b = await brand();
      const seen = Number((await first.next((e) => data(e).recordId === b)).id);
      first.close();
      for (const [i, lastEventId] of [String(seen + 1_000_000), '999999999999999'].entries()) {
        const again = await open(`${base}/events?entityName=Brand`, { 'Authorization-Token': t.token, 'Last-Event-ID': lastEventId });
        await again.next(() => false, 200).catch(() => undefined);
        const code = `ahead ${i}`;
        await t.patch(`/api/Brand/${b}`, { code }).expect(200);
        const live = await again.next((e) => data(e).diff.code?.became === code);
        expect(Number(live.id)).toBeGreaterThan(seen);
        expect(again.events).toEqual([live]);
        again.close();
      }
    });
    it('answers 400 for a Last-Event-ID (or lastEventId) that is no event id, before the stream opens; an empty one is none', async () => {
      for (const bad of ['abc', '-1', '1.5', '1e3', '0x10', '12abc']) {
        const res = await request(t.server).get(`${base}/events?entityName=Brand`).set({ 'Authorization-Token': t.token, 'Last-Event-ID': bad }).expect(400);
        expect(res.body.error.code).toBe('CORE_INVALID_QUERY');
        await request(t.server).head(`${base}/events`).set({ 'Authorization-Token': t.token, 'Last-Event-ID': bad }).expect(400);
        expect((await request(t.server).get(`${base}/events?lastEventId=${encodeURIComponent(bad)}`).set('Authorization-Token', t.token).expect(400)).body.error.code).toBe('CORE_INVALID_QUERY');
      }
      await request(t.server).get(`${base}/events?lastEventId[x]=1`).set('Authorization-Token', t.token).expect(400);
      // an empty id, and one with spaces around, are read as an event stream reads them
      const first = await open(`${base}/events?entityName=Brand`);
      const b = await brand();
      const seen = (await first.next((e) => data(e).recordId === b)).id as string;
      first.close();
      await t.patch(`/api/Brand/${b}`, { code: 'missed' }).expect(200);
      const again = await open(`${base}/events?entityName=Brand`, { 'Authorization-Token': t.token, 'Last-Event-ID': ` ${seen} ` });
      expect(data(await again.next((e) => data(e).recordId === b)).diff.code).toEqual({ was: null, became: 'missed' });
      const fresh = await open(`${base}/events?entityName=Brand&lastEventId=`);
      await t.patch(`/api/Brand/${b}`, { code: 'live' }).expect(200);
      expect(data(await fresh.next((e) => data(e).recordId === b)).diff.code).toEqual({ was: 'missed', became: 'live' });
      expect(fresh.events).toHaveLength(1);
    });
  });

  /** A brand made by the admin. */
  let brands = 0;
  const brand = async () => (await t.post('/api/Brand', { name: `SSE brand ${++brands}` }).expect(200)).body.id as string;

  it('authenticates by token header or session cookie; 401 without either or with a bad token', async () => {
    for (const base of ['/api', '/api/v1']) {
      for (const headers of [{}, { 'Authorization-Token': 'not-a-token' }, { Cookie: 'er_session=not-a-token' }]) {
        const res = await request(t.server).get(`${base}/events`).set(headers).expect(401);
        expect(res.body.error.code).toBe('CORE_UNAUTHORIZED');
      }
    }
    const cookie = await request(t.server).post('/api/userSession/cookie').send(ADMIN).expect(200);
    const session = (cookie.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const es = await open('/api/v1/events?entityName=Brand', { Cookie: session });
    expect(es.status).toBe(200);
    const b = await brand();
    expect(data(await es.next((e) => data(e).recordId === b)).action).toBe('Create');
  });

  it('shows each subscriber only what it may stream: no stream right, own records, unreadable fields', async () => {
    const noStream = await userWithRole(t, { scopes: { Product: { read: 'all', stream: false }, Brand: { read: 'all', stream: true } } });
    const own = await userWithRole(t, { scopes: { Product: { read: 'own', create: true, edit: 'own', stream: true }, Brand: { read: 'all', stream: true } } });
    const blind = await userWithRole(t, { scopes: { Product: { read: 'all', stream: true }, Brand: { read: 'all', stream: true } }, fields: { Product: { price: { read: false } } } });
    const [esNoStream, esOwn, esBlind] = [await open('/api/events', { 'Authorization-Token': noStream.token }), await open('/api/v1/events', { 'Authorization-Token': own.token }), await open('/api/events', { 'Authorization-Token': blind.token })];
    const theirs = (await t.post('/api/Product', { name: 'Theirs', price: 1 }).expect(200)).body.id;
    const mine = (await own.post('/api/Product', { name: 'Mine', price: 1 }).expect(200)).body.id;
    await t.patch(`/api/Product/${mine}`, { price: 2, name: 'Mine 2' }).expect(200);
    // assigned later: not own when it changed before
    const b = await brand();
    for (const es of [esNoStream, esOwn, esBlind]) await es.next((e) => data(e).recordId === b);
    const ids = (es: SseClient) => es.events.map((e) => [data(e).recordId, e.event]);
    expect(ids(esNoStream)).toEqual([[b, 'Create']]);
    expect(ids(esOwn)).toEqual([[mine, 'Create'], [mine, 'Update'], [b, 'Create']]);
    expect(ids(esBlind)).toEqual([[theirs, 'Create'], [mine, 'Create'], [mine, 'Update'], [b, 'Create']]);
    for (const e of esBlind.events.filter((x) => data(x).entityType === 'Product')) expect(Object.keys(data(e).diff)).not.toContain('price');
    expect(data(esBlind.events[2]).diff).toEqual({ name: { was: 'Mine', became: 'Mine 2' } });
    expect(data(esOwn.events[1]).diff).toEqual({ name: { was: 'Mine', became: 'Mine 2' }, price: { was: 1, became: 2 } });
    // Role and User changes are for admins only
    expect([...esNoStream.events, ...esOwn.events, ...esBlind.events].filter((e) => ['Role', 'User'].includes(data(e).entityType))).toEqual([]);
  });

  /** The event blocks of a raw chunked HTTP answer that arrived whole. */
  const completeEvents = (raw: string): string[] => {
    let rest = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    let body = '';
    for (;;) {
      const eol = rest.indexOf('\r\n');
      const size = eol < 0 ? NaN : parseInt(rest.slice(0, eol), 16);
      if (!(size > 0) || rest.length < eol + 2 + size) break;
      body += rest.slice(eol + 2, eol + 2 + size);
      rest = rest.slice(eol + 2 + size + 2);
    }
    return body.split('\n\n').slice(0, -1).filter((block) => /^id: /m.test(block));
  };

  it('drops a subscriber that does not read, without holding up writers or other subscribers; it resumes with Last-Event-ID', async () => {
    const reader = await open('/api/events?entityName=Product');
    // a raw connection that stops reading once the stream has begun
    const socket = net.connect(Number(new URL(s.url).port), '127.0.0.1');
    let received = '';
    let closed = false;
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => (closed = true));
    /** The server cut the connection off (what it had buffered for it comes first). */
    const ended = () => closed;
    socket.write(`GET /api/events?entityName=Product HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization-Token: ${t.token}\r\nAccept: text/event-stream\r\n\r\n`);
    for (let i = 0; i < 100 && !received.includes(': connected'); i++) await sleep(20);
    expect(received).toContain('200 OK');
    socket.pause();
    const big = 'x'.repeat(150_000);
    const id = (await t.post('/api/Product', { name: 'Big' }).expect(200)).body.id;
    const started = Date.now();
    for (let i = 0; i < 80; i++) await t.patch(`/api/Product/${id}`, { description: `${i}${big}` }).expect(200);
    const writing = Date.now() - started;
    const lastSeq = (await t.get(`/api/v1/Product/${id}/stream?maxSize=1`).expect(200)).body.list[0].id as string;
    // the reading subscriber got every change meanwhile (compared by id: parsing every big event at each wake-up costs too much)
    await reader.next((e) => e.id === lastSeq, 15_000);
    expect(reader.events).toHaveLength(81);
    // the paused one was cut off: reading again, it gets what the network still held, then the close
    socket.resume();
    for (let i = 0; i < 250 && !ended(); i++) await sleep(20);
    expect(ended()).toBe(true);
    // The events that came whole (the cut may fall inside one): the body is chunked.
    const ids = completeEvents(received).map((block) => /^id: (\d+)$/m.exec(block)?.[1] as string);
    expect(ids.length).toBeLessThan(81);
    expect(writing).toBeLessThan(30_000);
    // it resumes where it stopped, and misses nothing
    const resumed = await open('/api/events?entityName=Product', { 'Authorization-Token': t.token, 'Last-Event-ID': ids.at(-1) ?? '0' });
    await resumed.next((e) => e.id === lastSeq, 15_000);
    expect(data(resumed.events.at(-1) as SseEvent).diff.description.became).toBe(`79${big}`);
    const expected = reader.events.map((e) => e.id);
    const got = [...ids, ...resumed.events.map((e) => e.id as string)].filter((x) => Number(x) <= Number(expected.at(-1)));
    expect(got).toEqual(expected);
  });
});

describe.each(TEST_DBS)('server-sent event heartbeats on %s', (kind) => {
  it('sends a comment every events.heartbeatSeconds, and ends the stream once its token is revoked', async () => {
    const s = await served(kind, { entities: testEntities, events: { heartbeatSeconds: 0.2 } });
    try {
      const user = await userWithRole(s.t, { scopes: { Brand: { read: 'all', stream: true } } });
      const es = await openSse(`${s.url}/api/v1/events`, { 'Authorization-Token': user.token });
      try {
        await sleep(1100);
        expect(es.comments.filter((c) => c === 'keep-alive').length).toBeGreaterThanOrEqual(3);
        expect(es.ended()).toBe(false);
        await request(s.t.server).delete('/api/userSession').set('Authorization-Token', user.token).expect(200);
        for (let i = 0; i < 50 && !es.ended(); i++) await sleep(50);
        expect(es.ended()).toBe(true);
      } finally {
        es.close();
      }
    } finally {
      await s.close();
    }
  });
});

/** Streams ask again what their subscriber may see as soon as a token, user or role changes, not only at the heartbeat. */
describe.each(TEST_DBS)('server-sent events after a change of rights on %s', (kind) => {
  let s: Awaited<ReturnType<typeof served>>;
  const clients: SseClient[] = [];
  beforeAll(async () => {
    s = await served(kind, { entities: testEntities });
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(() => s.close());

  const open = async (token: string, base = '/api') => {
    const client = await openSse(`${s.url}${base}/events`, { 'Authorization-Token': token });
    clients.push(client);
    return client;
  };
  const endsWithin = async (es: SseClient, ms: number) => {
    for (let waited = 0; waited < ms && !es.ended(); waited += 25) await sleep(25);
    return es.ended();
  };

  it.each(GENERATIONS)('a revoked token ends its stream within a second, long before the heartbeat (generation %s)', async (_g, base) => {
    const user = await userWithRole(s.t, { scopes: { Brand: { read: 'all', stream: true } } });
    const es = await open(user.token, base);
    await s.t.post('/api/Brand', { name: `Seen ${base}` }).expect(200);
    await es.next((e) => e.event === 'Create');
    await request(s.t.server).delete(`${base === '/api' ? '/api/userSession' : '/api/v1/App/user'}`).set('Authorization-Token', user.token).expect(200);
    expect(await endsWithin(es, 1000)).toBe(true);
  });

  it('a deactivated user, or one whose password changed, loses its streams at once', async () => {
    const first = await userWithRole(s.t, { scopes: { Brand: { read: 'all', stream: true } } });
    const second = await userWithRole(s.t, { scopes: { Brand: { read: 'all', stream: true } } });
    const [a, b] = [await open(first.token), await open(second.token)];
    await s.t.patch(`/api/User/${first.user.id}`, { isActive: false }).expect(200);
    await s.t.patch(`/api/User/${second.user.id}`, { password: 'another-pw-123' }).expect(200);
    expect(await endsWithin(a, 1000)).toBe(true);
    expect(await endsWithin(b, 1000)).toBe(true);
  });

  it('a role that loses the stream right stops the events of that entity type with the next change, the others go on', async () => {
    const user = await userWithRole(s.t, { scopes: { Brand: { read: 'all', stream: true }, Category: { read: 'all', stream: true } } });
    const roleId = (await s.t.get(`/api/User/${user.user.id}`).expect(200)).body.rolesIds[0] as string;
    const es = await open(user.token);
    const before = (await s.t.post('/api/Brand', { name: 'Before the role changed' }).expect(200)).body.id;
    await es.next((e) => e.event === 'Create' && data(e).recordId === before);
    await s.t.patch(`/api/Role/${roleId}`, { scopes: { Brand: { read: 'all', stream: false }, Category: { read: 'all', stream: true } } }).expect(200);
    const hidden = (await s.t.post('/api/Brand', { name: 'After the role changed' }).expect(200)).body.id;
    const marker = (await s.t.post('/api/Category', { name: 'marker', code: 'marker' }).expect(200)).body.id;
    await es.next((e) => data(e).recordId === marker);
    expect(es.events.some((e) => data(e).recordId === hidden)).toBe(false);
    expect(es.ended()).toBe(false);
  });

  if (kind === 'postgres') {
    it('a token revoked through another process sharing the database ends the stream within a second', async () => {
      const other = await startTestApi(kind, { entities: testEntities }, s.t.db);
      try {
        const user = await userWithRole(s.t, { scopes: { Brand: { read: 'all', stream: true } } });
        const es = await open(user.token);
        await request(other.server).delete('/api/userSession').set('Authorization-Token', user.token).expect(200);
        expect(await endsWithin(es, 1000)).toBe(true);
      } finally {
        await other.close();
      }
    });
  }
});

/**
 * The owner and assignee of a change decide what an `own` subscriber sees. A batch of new records
 * logs its changes from the process (SQLite) or with the insert that stores them (PostgreSQL,
 * `createsLoggedByInsert`): both must give each change the record's creator and assignee.
 */
describe.each(TEST_DBS)('server-sent events of a batch of new records on %s', (kind) => {
  const Task = defineEntity({ name: 'Task', fields: { name: { type: 'varchar', required: true }, done: { type: 'bool', default: false }, assignedUser: { type: 'link', entity: 'User' } } });
  let s: Awaited<ReturnType<typeof served>>;
  const clients: SseClient[] = [];
  beforeAll(async () => {
    s = await served(kind, { entities: [...testEntities, Task] });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await s.close();
  });

  it.each(['/api/upsert', '/api/v1/MassActions/action/upsert'])('shows an own subscriber the Create events of the records it is assigned, through %s', async (path) => {
    const t = s.t;
    const role = { scopes: { Task: { read: 'own' as const, stream: true } } };
    const [assigned, other] = [await userWithRole(t, role), await userWithRole(t, role)];
    const [esAssigned, esOther, esAdmin] = await Promise.all([assigned.token, other.token, t.token].map((token) => openSse(`${s.url}/api/events?entityName=Task`, { 'Authorization-Token': token })));
    clients.push(esAssigned, esOther, esAdmin);
    const items = (prefix: string, user: string | null) => [0, 1, 2].map((k) => ({ entity: 'Task', payload: { name: `${prefix} ${k}`, assignedUserId: user } }));
    const body = (await t.post(path, [...items('Theirs', assigned.user.id as string), ...items('Nobody', null)]).expect(200)).body as { status: string; entity: { id: string } }[];
    expect(body.map((r) => r.status)).toEqual(Array(6).fill('Created'));
    const ids = body.map((r) => r.entity.id);
    await esAdmin.next((e) => data(e).recordId === ids[5]);
    // A record each of the two may see, made after the batch: once its event is in, so are the batch's.
    for (const [user, es] of [[assigned, esAssigned], [other, esOther]] as const) {
      const marker = (await t.post('/api/Task', { name: 'Marker', assignedUserId: user.user.id }).expect(200)).body.id as string;
      await es.next((e) => data(e).recordId === marker);
    }
    const seen = (es: SseClient) => es.events.map((e) => data(e).recordId).filter((id) => ids.includes(id));
    expect(seen(esAdmin)).toEqual(ids);
    expect(seen(esAssigned)).toEqual(ids.slice(0, 3));
    expect(seen(esOther)).toEqual([]);
    for (const e of esAssigned.events.filter((x) => ids.includes(data(x).recordId))) {
      expect(data(e).diff).toEqual({ name: { was: null, became: expect.stringMatching(/^Theirs \d$/) }, assignedUserId: { was: null, became: assigned.user.id }, done: { was: null, became: false } });
    }
  });
});
