import knex, { type Knex } from 'knex';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { eventually, webhookReceiver, type WebhookReceiver } from '../../../../test/support/webhook-receiver';

/**
 * A webhook created through one instance gets the changes another instance of the same
 * PostgreSQL database logged after it (CONTRACT §16), even a write that instance routed before it
 * heard of the webhook: the write chose its webhooks, then waited for a row lock while the webhook
 * was created, and logged its change after the webhook's.
 */
jest.setTimeout(60_000);
const describePg = TEST_DBS.includes('postgres') ? describe : describe.skip;

describePg('a webhook created through one instance, a write in flight in another', () => {
  let db: TestDatabase;
  let a: TestApi;
  let b: TestApi;
  let side: Knex;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await webhookReceiver();
    db = await createTestDatabase('postgres');
    const options = { entities: testEntities, webhooks: { allowedHosts: ['127.0.0.1'], pollMs: 100 } };
    a = await startTestApi('postgres', options, db);
    b = await startTestApi('postgres', options, db);
    side = knex({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    await side?.destroy();
    await b?.close();
    await a?.close();
    await db?.drop();
    await receiver?.close();
  });

  it('gets a delivery for the change the other instance logged after the webhook', async () => {
    const brand = (await b.post('/api/Brand', { name: 'Held' }).expect(200)).body.id as string;
    // Another connection holds the brand's row: the update through B (which knows no webhook)
    // decides that no webhook wants it, then waits for the row.
    const held = await side.transaction();
    await held('brand').where({ id: brand }).forUpdate().select('id');
    const update = b.patch(`/api/Brand/${brand}`, { name: 'Held longer' }).then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const hook = (await a.post('/api/Webhook', { name: 'late', url: receiver.url, secret: 'late-secret', entityTypes: ['Brand'] }).expect(200)).body.id as string;
    // B hears of the webhook, then the update goes on and logs its change after the webhook's.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await held.commit();
    expect((await update).status).toBe(200);
    const [webhookSeq] = (await side('record_change').where({ entity_type: 'Webhook', record_id: hook }).max({ seq: 'seq' })).map((r) => Number(r.seq));
    const [changeSeq] = (await side('record_change').where({ entity_type: 'Brand', record_id: brand, action: 'Update' }).select('seq')).map((r) => Number(r.seq));
    expect(changeSeq).toBeGreaterThan(webhookSeq);

    const deliveries = await eventually(
      async () => (await a.get(`/api/WebhookDelivery?where[0][type]=equals&where[0][attribute]=webhookId&where[0][value]=${hook}`).expect(200)).body.list as { seq: number; recordId: string; action: string }[],
      (list) => list.length > 0,
      10_000,
    ).catch(() => []);
    expect(deliveries.map((d) => ({ seq: d.seq, recordId: d.recordId, action: d.action }))).toEqual([{ seq: changeSeq, recordId: brand, action: 'Update' }]);
    await eventually(
      async () => receiver.received.filter((r) => r.body.event.seq === changeSeq).length,
      (count) => count === 1,
      10_000,
    );
    // Every later write through either instance gets its delivery as usual, and once.
    await b.patch(`/api/Brand/${brand}`, { name: 'Held once more' }).expect(200);
    await a.patch(`/api/Brand/${brand}`, { name: 'Held at last' }).expect(200);
    const all = await eventually(
      async () => (await a.get(`/api/WebhookDelivery?where[0][type]=equals&where[0][attribute]=webhookId&where[0][value]=${hook}&sortBy=seq`).expect(200)).body.list as { seq: number }[],
      (list) => list.length === 3,
      10_000,
    );
    expect(new Set(all.map((d) => d.seq)).size).toBe(3);
  });
});

// Only PostgreSQL runs writes side by side, which is what can miss a webhook (SQLite runs one write
// transaction at a time, and the webhook's change drops the list within it).
describePg('deliveries written again for a webhook changed within the last minute on postgres', () => {
  const kind = 'postgres';
  let t: TestApi;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await webhookReceiver();
    t = await startTestApi(kind, { entities: testEntities, webhooks: { allowedHosts: ['127.0.0.1'], pollMs: 100 } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('writes the one a change after the webhook lacks, once, and none for changes before it', async () => {
    const before = (await t.post('/api/Brand', { name: 'Before the hook' }).expect(200)).body.id as string;
    const hook = (await t.post('/api/Webhook', { name: 'again', url: receiver.url, secret: 'again-secret', entityTypes: ['Brand'] }).expect(200)).body.id as string;
    const after = (await t.post('/api/Brand', { name: 'After the hook' }).expect(200)).body.id as string;
    const deliveriesOf = async () =>
      (await t.get(`/api/WebhookDelivery?where[0][type]=equals&where[0][attribute]=webhookId&where[0][value]=${hook}`).expect(200)).body.list as { recordId: string; status: string }[];
    await eventually(deliveriesOf, (list) => list.length === 1 && list[0].status === 'Delivered');
    // As if the process that logged the change had routed it before it heard of the webhook.
    await t.api.database.knex('webhook_delivery').where({ webhook_id: hook }).delete();
    // Any webhook change makes every process look again.
    await t.post('/api/Webhook', { name: 'other', url: receiver.url, secret: 'other-secret', isActive: false }).expect(200);
    const list = await eventually(deliveriesOf, (l) => l.length === 1 && l[0].status === 'Delivered');
    expect(list.map((d) => d.recordId)).toEqual([after]);
    // A second look writes nothing more.
    await t.patch(`/api/Webhook/${hook}`, { name: 'again, renamed' }).expect(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await deliveriesOf()).map((d) => d.recordId)).toEqual([after]);
    expect(receiver.received.filter((r) => r.body.event.recordId === before)).toHaveLength(0);
  });
});
