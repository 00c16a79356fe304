import fs from 'node:fs';
import type { LookupFunction } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import meta from '@entity-records/meta';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';
import { eventually, verifies, webhookReceiver, type WebhookReceiver } from '../../../../test/support/webhook-receiver';

/**
 * Webhooks (CONTRACT §16): admins only, the secret never shown; each matching change becomes one
 * signed delivery, retried with a growing wait, then Failed; redelivery; order per record; the
 * address guard at connect time. Receivers listen on 127.0.0.1 only.
 */

/** Names resolved to loopback addresses, as a hostile DNS answer might; nothing else resolves. */
const STUB: Record<string, string> = { 'loopback.example': '127.0.0.1', 'other-loopback.example': '127.9.9.9' };
const stubLookup: LookupFunction = ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
  const address = STUB[hostname];
  if (!address) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
  if (options.all) return callback(null, [{ address, family: 4 }]);
  return callback(null, address, 4);
}) as LookupFunction;

const SECRET = 'a-secret-only-the-receiver-knows';
const RETRY_BASE_MS = 150;

type Delivery = { id: string; webhookId: string; seq: number; status: string; attempts: number; lastStatusCode: number | null; lastError: string | null; nextAttemptAt: string | null; deliveredAt: string | null; recordId: string; entityType: string; action: string };

describe.each(TEST_DBS)('webhooks on %s', (kind) => {
  let t: TestApi;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await webhookReceiver();
    t = await startTestApi(kind, {
      entities: testEntities,
      plugins: [meta],
      webhooks: { allowedHosts: ['127.0.0.1'], maxAttempts: 3, retryBaseMs: RETRY_BASE_MS, timeoutMs: 2000, pollMs: 100, lookup: stubLookup },
    });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
  });

  /** Creates a webhook and answers its id. */
  const webhook = async (body: Record<string, unknown>, base = '/api') =>
    (await t.post(`${base}/Webhook`, { name: 'hook', url: receiver.url, secret: SECRET, ...body }).expect(200)).body.id as string;
  /** Turns every webhook off, so that each test sees only its own. */
  const quiet = async () => {
    for (const hook of (await t.get('/api/Webhook?maxSize=200').expect(200)).body.list) await t.patch(`/api/Webhook/${hook.id}`, { isActive: false }).expect(200);
  };
  const deliveriesOf = async (webhookId: string): Promise<Delivery[]> =>
    (await t.get(`/api/WebhookDelivery?where[0][type]=equals&where[0][attribute]=webhookId&where[0][value]=${webhookId}&sortBy=seq&maxSize=200`).expect(200)).body.list;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    beforeEach(quiet);

    it('are for admins only: every other role gets 403, whatever it says, and _meta tells', async () => {
      const id = await webhook({ entityTypes: ['Brand'] }, base);
      const user = await userWithRole(t, { scopes: { Webhook: { create: true, read: 'all', edit: 'all', delete: 'all' }, WebhookDelivery: { read: 'all', edit: 'all' } } });
      await user.get(`${base}/Webhook`).expect(403);
      await user.get(`${base}/Webhook/${id}`).expect(403);
      await user.post(`${base}/Webhook`, { name: 'x', url: receiver.url, secret: 's' }).expect(403);
      await user.patch(`${base}/Webhook/${id}`, { isActive: false }).expect(403);
      await user.del(`${base}/Webhook/${id}`).expect(403);
      await user.get(`${base}/WebhookDelivery`).expect(403);
      await user.post(`${base}/WebhookDelivery/whatever/redeliver`).expect(403);
      const acl = (await user.get('/api/v1/App/user').expect(200)).body.acl;
      expect(acl.Webhook).toMatchObject({ create: false, read: 'no', edit: 'no', delete: 'no' });
      expect((await t.get(`${base}/Webhook/${id}`).set('With-Meta', 'true').expect(200)).body._meta.permissions).toMatchObject({ edit: true, delete: true });
      expect((await t.get(`${base}/Webhook/${id}`).expect(200)).body).toMatchObject({ id, isActive: true, entityTypes: ['Brand'] });
    });

    it('never return the secret, and refuse to select or filter by it', async () => {
      const created = (await t.post(`${base}/Webhook`, { name: 'secretive', url: receiver.url, secret: SECRET, isActive: false }).expect(200)).body;
      expect(created).not.toHaveProperty('secret');
      const updated = (await t.patch(`${base}/Webhook/${created.id}`, { secret: 'another-secret' }).expect(200)).body;
      expect(updated).not.toHaveProperty('secret');
      const read = await t.get(`${base}/Webhook/${created.id}`).expect(200);
      const list = await t.get(`${base}/Webhook?maxSize=200`).expect(200);
      for (const text of [JSON.stringify(created), JSON.stringify(updated), read.text, list.text]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain('another-secret');
      }
      await t.get(`${base}/Webhook?select=secret`).expect(400);
      await t.get(`${base}/Webhook?where[0][type]=equals&where[0][attribute]=secret&where[0][value]=${SECRET}`).expect(400);
      const stream = await t.get(`/api/v1/Webhook/${created.id}/stream`).expect(200);
      expect(stream.text).not.toContain('another-secret');
    });

    it('are validated: http or https url, known actions and entity types; a refused write stores nothing', async () => {
      const total = async () => (await t.get(`${base}/Webhook?totalOnly=true`).expect(200)).body.total;
      const before = await total();
      for (const body of [
        { url: 'ftp://127.0.0.1/x' },
        { url: 'not a url' },
        { url: 'javascript:alert(1)' },
        { actions: ['Explode'] },
        { entityTypes: ['NoSuchEntity'] },
        { secret: '' },
        { secret: undefined },
      ]) {
        const res = await t.post(`${base}/Webhook`, { name: 'bad', url: receiver.url, secret: SECRET, ...body }).expect(400);
        expect(res.body.error.code).toMatch(/^CORE_(VALIDATION_FAILED)$/);
      }
      expect(await total()).toBe(before);
      const id = await webhook({ isActive: false }, base);
      await t.patch(`${base}/Webhook/${id}`, { url: 'file:///etc/passwd' }).expect(400);
      expect((await t.get(`${base}/Webhook/${id}`).expect(200)).body.url).toBe(receiver.url);
    });

    it('route changes by the webhooks as they are now: one made or changed while another is known takes effect at once', async () => {
      const brands = await webhook({ entityTypes: ['Brand'] }, base);
      // A write routed through the active webhooks: this process now knows them.
      await t.post(`${base}/Brand`, { name: `Known ${base}` }).expect(200);
      await eventually(() => deliveriesOf(brands), (list) => list.length === 1);
      // Neither write below is wanted by a webhook: each takes the one-statement path, and must
      // still make the routing read the webhooks again.
      const products = await webhook({ entityTypes: ['Product'] }, base);
      await t.post(`${base}/Product`, { name: `Routed ${base}`, price: 1 }).expect(200);
      await eventually(() => deliveriesOf(products), (list) => list.length === 1);
      await t.patch(`${base}/Webhook/${brands}`, { entityTypes: ['Product'] }).expect(200);
      await t.post(`${base}/Brand`, { name: `Unrouted ${base}` }).expect(200);
      await t.post(`${base}/Product`, { name: `Routed twice ${base}`, price: 2 }).expect(200);
      await eventually(() => deliveriesOf(brands), (list) => list.length === 2);
      expect((await deliveriesOf(brands)).map((d) => d.entityType)).toEqual(['Brand', 'Product']);
    });

    it('see a create that links a brand once, with its record as answered; a create whose brand is missing stores and delivers nothing', async () => {
      const id = await webhook({ entityTypes: ['Product'] }, base);
      const brandId = (await t.post(`${base}/Brand`, { name: `Linked by a hooked create ${base}` }).expect(200)).body.id;
      // A webhook wants the change: the create runs in a transaction, its brand still judged by its insert.
      const created = await t.post(`${base}/Product`, { name: `Hooked link ${base}`, brandId }).expect(200);
      expect(created.body).toMatchObject({ brandId, brandName: `Linked by a hooked create ${base}` });
      expect(created.body).toEqual((await t.get(`${base}/Product/${created.body.id}`).expect(200)).body);
      const refused = await t.post(`${base}/Product`, { id: `hooked-missing-${base.length}`, name: 'Refused', brandId: 'no-such-brand' }).expect(400);
      expect(refused.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message: "Brand 'no-such-brand' not found (brandId)" });
      await t.get(`${base}/Product/hooked-missing-${base.length}`).expect(404);
      const delivered = await eventually(() => deliveriesOf(id), (list) => list.length >= 1);
      expect(delivered.map((d) => [d.recordId, d.action])).toEqual([[created.body.id, 'Create']]);
    });

    it('deliveries are read-only: no create, update or delete, admins included', async () => {
      const id = await webhook({ entityTypes: ['Brand'], actions: ['Create'] }, base);
      await t.post(`${base}/Brand`, { name: `RO ${base}` }).expect(200);
      const [delivery] = await eventually(() => deliveriesOf(id), (list) => list.length === 1 && list[0].status === 'Delivered');
      await t.post(`${base}/WebhookDelivery`, { seq: 1 }).expect(403);
      expect((await t.patch(`${base}/WebhookDelivery/${delivery.id}`, { status: 'Failed' }).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      await t.del(`${base}/WebhookDelivery/${delivery.id}`).expect(403);
      expect((await t.get(`${base}/WebhookDelivery/${delivery.id}`).set('With-Meta', 'true').expect(200)).body._meta.permissions).toMatchObject({ edit: false, delete: false });
    });

    it('deliver a change once, signed, with the change in the body', async () => {
      const id = await webhook({ entityTypes: ['Product'] }, base);
      const product = (await t.post(`${base}/Product`, { name: `Hooked ${base}`, price: 5 }).expect(200)).body;
      const [request] = await receiver.waitFor(1);
      const [delivery] = await eventually(() => deliveriesOf(id), (list) => list[0]?.status === 'Delivered');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-webhook-id']).toBe(id);
      expect(Number(request.headers['x-webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
      expect(verifies(request, SECRET)).toBe(true);
      expect(verifies(request, 'another secret')).toBe(false);
      expect(request.body).toEqual({
        deliveryId: delivery.id,
        webhookId: id,
        event: {
          seq: delivery.seq,
          entityType: 'Product',
          recordId: product.id,
          action: 'Create',
          diff: expect.objectContaining({ name: { was: null, became: `Hooked ${base}` }, price: { was: null, became: 5 } }),
          userId: product.createdById,
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        },
      });
      expect(delivery).toMatchObject({ status: 'Delivered', attempts: 1, lastStatusCode: 200, lastError: null, recordId: product.id, entityType: 'Product', action: 'Create' });
      expect(delivery.deliveredAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      // The change log agrees: the delivery's seq is the change's.
      const stream = (await t.get(`/api/v1/Product/${product.id}/stream`).expect(200)).body.list;
      expect(stream.map((c: { action: string }) => c.action)).toEqual(['Create']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.received).toHaveLength(1);
      expect(await deliveriesOf(id)).toHaveLength(1);
    });

    it('get only the entity types and actions they ask for; an inactive one gets nothing', async () => {
      const brandUpdates = await webhook({ entityTypes: ['Brand'], actions: ['Update', 'Delete'] }, base);
      const off = await webhook({ isActive: false }, base);
      const brand = (await t.post(`${base}/Brand`, { name: `Filtered ${base}` }).expect(200)).body.id;
      await t.patch(`${base}/Brand/${brand}`, { code: 'F1' }).expect(200);
      await t.post(`${base}/Product`, { name: 'Not for them' }).expect(200);
      await t.del(`${base}/Brand/${brand}`).expect(200);
      await t.post('/api/entityRestore', { entityName: 'Brand', ids: [brand] }).expect(200);
      const list = await eventually(() => deliveriesOf(brandUpdates), (l) => l.length === 2 && l.every((d) => d.status === 'Delivered'));
      expect(list.map((d) => d.action)).toEqual(['Update', 'Delete']);
      expect(receiver.received.map((r) => [r.body.webhookId, r.body.event.action, r.body.event.recordId])).toEqual([
        [brandUpdates, 'Update', brand],
        [brandUpdates, 'Delete', brand],
      ]);
      expect(await deliveriesOf(off)).toEqual([]);
    });
  });

  describe('delivery attempts', () => {
    beforeEach(quiet);

    it('retry a failing receiver with a growing wait, then fail; redelivery (both generations) delivers', async () => {
      receiver.answer = () => 500;
      const id = await webhook({ entityTypes: ['Category'] });
      const category = (await t.post('/api/Category', { name: 'Failing', code: `fail-${Date.now()}` }).expect(200)).body.id;
      const [failed] = await eventually(() => deliveriesOf(id), (l) => l[0]?.status === 'Failed');
      expect(failed).toMatchObject({ status: 'Failed', attempts: 3, lastStatusCode: 500, lastError: 'answered with status 500', nextAttemptAt: null, deliveredAt: null, recordId: category });
      const times = receiver.received.map((r) => r.at);
      expect(times).toHaveLength(3);
      // Waits of the base, then twice the base (timers may fire a little early or late).
      expect(times[1] - times[0]).toBeGreaterThanOrEqual(RETRY_BASE_MS - 20);
      expect(times[2] - times[1]).toBeGreaterThanOrEqual(2 * RETRY_BASE_MS - 20);
      expect(new Set(receiver.received.map((r) => r.body.deliveryId))).toEqual(new Set([failed.id]));
      await new Promise((resolve) => setTimeout(resolve, 4 * RETRY_BASE_MS));
      expect(receiver.received).toHaveLength(3);

      receiver.answer = () => 204;
      for (const [, base] of GENERATIONS) {
        const before = receiver.received.length;
        const answer = await t.post(`${base}/WebhookDelivery/${failed.id}/redeliver`).expect(200);
        const queued = answer.body;
        expect(queued).toMatchObject({ id: failed.id, status: 'Pending', attempts: 0 });
        // The answer carries the delivery's version, as a read of it does.
        expect(answer.headers.etag).toMatch(/^"\d+"$/);
        const [done] = await eventually(() => deliveriesOf(id), (l) => l[0]?.status === 'Delivered');
        expect(done).toMatchObject({ attempts: 1, lastStatusCode: 204, lastError: null });
        expect(receiver.received.length).toBe(before + 1);
        expect(verifies(receiver.received[before], SECRET)).toBe(true);
      }
      await t.post('/api/WebhookDelivery/no-such-delivery/redeliver').expect(404);
    });

    it('move the version of a delivery when a worker takes an attempt, and again when it ends (CONTRACT §16)', async () => {
      receiver.answer = () => 'hold';
      const hook = await webhook({ entityTypes: ['Category'] });
      await t.post('/api/Category', { name: 'Held', code: `held-${Date.now()}` }).expect(200);
      await receiver.waitFor(1);
      const [delivery] = await deliveriesOf(hook);
      const tags = new Set<string>();
      for (const [, base] of GENERATIONS) {
        const read = (ifNoneMatch: string) => t.get(`${base}/WebhookDelivery/${delivery.id}`).set('If-None-Match', ifNoneMatch);
        // Stored at version 1 with no attempt; the attempt in flight is another version.
        const held = await read('"1"');
        expect(held.status).toBe(200);
        expect(held.body).toMatchObject({ status: 'Pending', attempts: 1, lastError: null });
        tags.add(held.headers.etag as string);
        expect((await read(held.headers.etag as string)).status).toBe(304);
      }
      expect(tags.size).toBe(1);
      const [heldTag] = tags;
      await t.patch(`/api/Webhook/${hook}`, { isActive: false }).expect(200);
      await eventually(() => deliveriesOf(hook), (l) => l[0]?.lastError !== null, 10_000);
      const ended = await t.get(`/api/v1/WebhookDelivery/${delivery.id}`).set('If-None-Match', heldTag);
      expect(ended.status).toBe(200);
      expect(ended.body.lastError).toBe('no answer within 2000 ms');
    });

    it('count a receiver that does not answer in time, or refuses the connection, as a failed attempt', async () => {
      receiver.answer = () => 'hold';
      const slow = await webhook({ entityTypes: ['Category'] });
      await t.post('/api/Category', { name: 'Slow', code: `slow-${Date.now()}` }).expect(200);
      const [held] = await eventually(() => deliveriesOf(slow), (l) => l[0]?.attempts >= 1 && l[0]?.lastError !== null, 10_000);
      expect(held.lastError).toBe('no answer within 2000 ms');
      expect(held.lastStatusCode).toBeNull();
      await t.patch(`/api/Webhook/${slow}`, { isActive: false }).expect(200);

      const closed = await webhookReceiver();
      const url = closed.url;
      await closed.close();
      const nobody = await webhook({ entityTypes: ['Category'], url });
      await t.post('/api/Category', { name: 'Nobody', code: `nobody-${Date.now()}` }).expect(200);
      const [refused] = await eventually(() => deliveriesOf(nobody), (l) => l[0]?.status === 'Failed');
      expect(refused).toMatchObject({ attempts: 3, lastStatusCode: null });
      expect(refused.lastError).toMatch(/^could not connect: .*ECONNREFUSED/);
    });

    it('deliver the changes of one record in seq order, even when the first attempt of the first fails', async () => {
      let failedOnce = false;
      receiver.answer = (r) => {
        if (!failedOnce && r.body.event.action === 'Create') {
          failedOnce = true;
          return 503;
        }
        return 200;
      };
      const id = await webhook({ entityTypes: ['Brand'] });
      const brand = (await t.post('/api/Brand', { name: `Ordered ${Date.now()}` }).expect(200)).body.id;
      for (let i = 1; i <= 3; i++) await t.patch(`/api/Brand/${brand}`, { code: `O${i}` }).expect(200);
      const list = await eventually(() => deliveriesOf(id), (l) => l.length === 4 && l.every((d) => d.status === 'Delivered'));
      const seqs = receiver.received.map((r) => r.body.event.seq);
      expect(seqs).toEqual([list[0].seq, ...list.map((d) => d.seq)]);
      expect(receiver.received.map((r) => r.body.event.action)).toEqual(['Create', 'Create', 'Update', 'Update', 'Update']);
      expect(list[0]).toMatchObject({ attempts: 2, lastStatusCode: 200 });
    });

    // 127.0.0.1 is allowed (the receiver's address); spellings that parse to it are that host.
    it('never connect to loopback or private addresses that are not allowed, checked at connect time', async () => {
      const p = receiver.port;
      const urls = [
        `http://localhost:${p}/hook`,
        `http://127.0.0.2:${p}/hook`,
        `http://[::1]:${p}/hook`,
        `http://[::ffff:127.0.0.1]:${p}/hook`,
        `http://0.0.0.0:${p}/hook`,
        `http://loopback.example:${p}/hook`,
        `http://other-loopback.example:${p}/hook`,
      ];
      const ids = [];
      for (const url of urls) ids.push(await webhook({ entityTypes: ['Category'], url }));
      const connections = receiver.connections();
      await t.post('/api/Category', { name: 'Guarded', code: `guard-${Date.now()}` }).expect(200);
      for (const [i, id] of ids.entries()) {
        const [delivery] = await eventually(() => deliveriesOf(id), (l) => l[0]?.status === 'Failed');
        expect({ url: urls[i], lastError: delivery.lastError }).toEqual({ url: urls[i], lastError: expect.stringMatching(/^refused: host .* (is a private or reserved address|is this host|resolves to a private or reserved address)$/) });
      }
      expect(receiver.connections()).toBe(connections);
      expect(receiver.received).toEqual([]);
    });

    it('make one delivery per webhook of a set-based write, and none for a write that changes nothing', async () => {
      const a = await webhook({ entityTypes: ['Brand'], actions: ['Create'] });
      const b = await webhook({ entityTypes: ['Brand'] });
      const stamp = Date.now();
      const items = Array.from({ length: 5 }, (_, i) => ({ entity: 'Brand', payload: { name: `Bulk ${stamp} ${i}` } }));
      await t.post('/api/upsert', items).expect(200);
      await t.post('/api/upsert', items).expect(200);
      await eventually(() => deliveriesOf(b), (l) => l.length === 5 && l.every((d) => d.status === 'Delivered'));
      await eventually(() => deliveriesOf(a), (l) => l.length === 5 && l.every((d) => d.status === 'Delivered'));
      expect(receiver.received).toHaveLength(10);
    });
  });
});

describe.each(TEST_DBS)('webhook deliveries when an instance closes on %s', (kind) => {
  let receiver: WebhookReceiver;
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    receiver = await webhookReceiver();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-hooks-close-'));
    db = kind === 'sqlite' ? { kind, url: `sqlite:${path.join(dir, 'hooks.sqlite')}`, drop: async () => undefined } : await createTestDatabase(kind);
  });
  afterAll(async () => {
    await receiver.close();
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
  });

  it('answer a redelivery as queued while a second instance polls the queue every millisecond', async () => {
    const options = { entities: testEntities, webhooks: { allowedHosts: ['127.0.0.1'], pollMs: 1 } };
    const server = await startTestApi(kind, options, db);
    // Another process's worker, taking every due delivery as soon as it can.
    const worker = await startTestApi(kind, options, db);
    try {
      const hook = (await server.post('/api/Webhook', { name: 'eager', url: receiver.url, secret: SECRET, entityTypes: ['Category'] }).expect(200)).body.id;
      await server.post('/api/Category', { name: 'Eager', code: `eager-${Date.now()}` }).expect(200);
      const of = async () => (await server.get(`/api/WebhookDelivery?where[0][type]=equals&where[0][attribute]=webhookId&where[0][value]=${hook}`).expect(200)).body.list as Delivery[];
      const [delivered] = await eventually(of, (list) => list[0]?.status === 'Delivered');
      for (let round = 0; round < 10; round++) {
        const [, base] = GENERATIONS[round % 2];
        const answer = await server.post(`${base}/WebhookDelivery/${delivered.id}/redeliver`).expect(200);
        expect(answer.body).toMatchObject({ status: 'Pending', attempts: 0, deliveredAt: null });
        // The hold ends with the answer: the delivery is made again, once.
        await eventually(of, (list) => list[0]?.status === 'Delivered');
        const read = await server.get(`/api/WebhookDelivery/${delivered.id}`).expect(200);
        expect(read.body.attempts).toBe(1);
        expect(Number(read.headers.etag.replaceAll('"', ''))).toBeGreaterThan(Number(answer.headers.etag.replaceAll('"', '')));
      }
      expect(receiver.received.filter((r) => r.body.webhookId === hook)).toHaveLength(11);
      await server.patch(`/api/Webhook/${hook}`, { isActive: false }).expect(200);
    } finally {
      await worker.close();
      await server.close();
    }
  });

  it('hands an attempt in flight back (not counted, no lease left): the next instance makes it at once', async () => {
    // A lease far longer than the test: only the hand-back lets the next instance deliver in time.
    const options = { entities: testEntities, webhooks: { allowedHosts: ['127.0.0.1'], leaseMs: 600_000, timeoutMs: 30_000, pollMs: 100 }, closeGraceMs: 1000 };
    receiver.answer = (_r, index) => (index === 0 ? 'hold' : 200);
    const first = await startTestApi(kind, options, db);
    const hook = (await first.post('/api/Webhook', { name: 'close', url: receiver.url, secret: SECRET, entityTypes: ['Brand'] }).expect(200)).body.id;
    const brand = (await first.post('/api/Brand', { name: 'Closing' }).expect(200)).body.id;
    await receiver.waitFor(1);
    const closing = Date.now();
    await first.close();
    expect(Date.now() - closing).toBeLessThan(10_000);

    const second = await startTestApi(kind, options, db);
    try {
      const [delivery] = await eventually(
        async () => (await second.get(`/api/WebhookDelivery?where[0][type]=equals&where[0][attribute]=webhookId&where[0][value]=${hook}`).expect(200)).body.list as Delivery[],
        (list) => list[0]?.status === 'Delivered',
      );
      expect(delivery).toMatchObject({ recordId: brand, attempts: 1, lastStatusCode: 200 });
      expect(receiver.received.map((r) => r.body.deliveryId)).toEqual([delivery.id, delivery.id]);
    } finally {
      await second.close();
    }
  });
});
