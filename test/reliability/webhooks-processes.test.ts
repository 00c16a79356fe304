import path from 'node:path';
import { childServerScope, ROOT, signIn, type ChildServer } from '../support/child-server';
import { TEST_DBS, type TestDatabase } from '../support/databases';
import { killPim, pimDatabase } from '../support/pim-child';
import { eventually, verifies, webhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * Webhook deliveries with several processes on one database (CONTRACT §16): two workers on one
 * PostgreSQL make each delivery once; a process killed while a receiver holds its request leaves
 * a lease that runs out, and the restarted process delivers it.
 */
jest.setTimeout(120_000);

const scope = childServerScope(path.join(ROOT, 'test/support/webhook-server.js'), 'er-webhooks-');
const PASSWORD = 'webhook-processes-password';
const SECRET = 'secret-of-the-processes-test';

interface Server extends ChildServer {
  call(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: any }>;
}

async function start(db: TestDatabase, env: Record<string, string> = {}): Promise<Server> {
  const server = await scope.start({
    env: (port) => ({ PORT: String(port), DATABASE_URL: db.url, ADMIN_PASSWORD: PASSWORD, ...env }),
    listening: (port) => new RegExp(`webhook server listening on ${port}`),
  });
  const token = ((await (await signIn(server.url, 'admin', PASSWORD)).json()) as { authorizationToken: string }).authorizationToken;
  return {
    ...server,
    async call(method, pathname, body) {
      const res = await fetch(`${server.url}${pathname}`, { method, headers: { 'Authorization-Token': token, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

type Delivery = { id: string; seq: number; status: string; attempts: number; recordId: string };
const deliveries = async (server: Server): Promise<Delivery[]> => (await server.call('GET', '/api/WebhookDelivery?sortBy=seq&maxSize=1000')).body.list;

describe('two worker processes on one PostgreSQL', () => {
  const run = TEST_DBS.includes('postgres') ? it : it.skip;
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await webhookReceiver();
  });
  afterEach(() => receiver.close());

  run('deliver each change once, in seq order per record, whichever process wrote it', async () => {
    const db = await pimDatabase('postgres', scope.dir, 'two');
    try {
      const a = await start(db);
      const b = await start(db);
      const hook = await a.call('POST', '/api/Webhook', { name: 'both', url: receiver.url, secret: SECRET, entityTypes: ['Product'] });
      expect(hook.status).toBe(200);
      // Both processes know the new webhook (the one that did not create it is told).
      await new Promise((resolve) => setTimeout(resolve, 300));
      const records: string[] = [];
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 10; i++) {
        const server = i % 2 === 0 ? a : b;
        const created = await server.call('POST', '/api/Product', { name: `P${i}`, quantity: 0 });
        expect(created.status).toBe(200);
        records.push(created.body.id);
      }
      // Three updates of every record, alternately through either process and concurrently.
      for (let round = 1; round <= 3; round++) {
        writes.length = 0;
        for (const [i, id] of records.entries()) writes.push((i % 2 === 0 ? b : a).call('PATCH', `/api/Product/${id}`, { quantity: round }));
        for (const res of (await Promise.all(writes)) as { status: number }[]) expect(res.status).toBe(200);
      }
      const list = await eventually(() => deliveries(a), (l) => l.length === 40 && l.every((d) => d.status === 'Delivered'), 30_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Each delivery reached the receiver exactly once.
      const ids = receiver.received.map((r) => r.body.deliveryId);
      expect(ids).toHaveLength(40);
      expect(new Set(ids)).toEqual(new Set(list.map((d) => d.id)));
      expect(list.every((d) => d.attempts === 1)).toBe(true);
      for (const r of receiver.received) expect(verifies(r, SECRET)).toBe(true);
      // Per record, the changes arrived in seq order.
      for (const id of records) {
        const seqs = receiver.received.filter((r) => r.body.event.recordId === id).map((r) => r.body.event.seq);
        expect({ id, seqs }).toEqual({ id, seqs: [...seqs].sort((x, y) => x - y) });
        expect(seqs).toHaveLength(4);
      }
    } finally {
      await db.drop();
    }
  });
});

describe.each(TEST_DBS)('a worker killed during a delivery on %s', (kind) => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await webhookReceiver();
  });
  afterEach(() => receiver.close());

  it('leaves a lease that runs out; the restarted process delivers it', async () => {
    const db = await pimDatabase(kind, scope.dir, `kill-${Date.now()}`);
    try {
      // The receiver holds the first request and answers every later one.
      receiver.answer = (_r, index) => (index === 0 ? 'hold' : 200);
      const env = { WEBHOOK_LEASE_MS: '3000', WEBHOOK_TIMEOUT_MS: '2500' };
      const first = await start(db, env);
      const hook = (await first.call('POST', '/api/Webhook', { name: 'kill', url: receiver.url, secret: SECRET, entityTypes: ['Product'] })).body.id;
      const product = (await first.call('POST', '/api/Product', { name: 'Held' })).body.id;
      await receiver.waitFor(1);
      await killPim(first);

      const second = await start(db, env);
      const [request] = (await receiver.waitFor(2, 20_000)).slice(1);
      expect(request.body).toMatchObject({ webhookId: hook, event: { recordId: product, action: 'Create' } });
      expect(request.body.deliveryId).toBe(receiver.received[0].body.deliveryId);
      expect(verifies(request, SECRET)).toBe(true);
      const [delivery] = await eventually(() => deliveries(second), (l) => l[0]?.status === 'Delivered');
      expect(delivery).toMatchObject({ id: request.body.deliveryId, recordId: product });
      await scope.stop(second);
    } finally {
      await db.drop();
    }
  });
});
