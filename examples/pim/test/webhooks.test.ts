import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../test/support/databases';
import { eventually, verifies, webhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver';
import { createPim, type Pim } from '../src/app';
import { readConfig } from '../src/config';

/** The example serves webhooks; FILE_URL_ALLOWED_HOSTS is also their allow-list (CONTRACT §13, §16). */
jest.setTimeout(60_000);
const PASSWORD = 'pim-webhooks-password';

describe.each(TEST_DBS)('webhooks of the example on %s', (kind) => {
  let receiver: WebhookReceiver;
  let storage: string;
  beforeAll(async () => {
    receiver = await webhookReceiver();
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'er-pim-hooks-'));
  });
  afterAll(async () => {
    await receiver.close();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  /** The example with FILE_URL_ALLOWED_HOSTS as given, and an admin token. */
  async function start(allowed: string): Promise<{ pim: Pim; db: TestDatabase; token: string }> {
    const db = await createTestDatabase(kind);
    const config = readConfig({ LOG_LEVEL: 'silent', FILE_URL_ALLOWED_HOSTS: allowed });
    const pim = await createPim({ ...config, databaseUrl: db.url, storageDir: storage, adminPassword: PASSWORD, demoData: false });
    const login = await request(pim.app).get('/api/userSession').auth('admin', PASSWORD).set('Authorization-Token-Only', 'true').expect(200);
    return { pim, db, token: login.body.authorizationToken };
  }

  for (const [allowed, delivered] of [['127.0.0.1', true], ['', false]] as const) {
    it(`${delivered ? 'delivers to' : 'refuses'} a loopback receiver when FILE_URL_ALLOWED_HOSTS is '${allowed}'`, async () => {
      const { pim, db, token } = await start(allowed);
      try {
        const call = (method: 'get' | 'post', url: string) => request(pim.app)[method](url).set('Authorization-Token', token);
        const before = receiver.received.length;
        const connections = receiver.connections();
        const hook = (await call('post', '/api/Webhook').send({ name: 'pim', url: receiver.url, secret: 'pim-secret', entityTypes: ['Brand'], actions: ['Create'] }).expect(200)).body.id;
        const brand = (await call('post', '/api/v1/Brand').send({ name: `Hooked ${allowed || 'none'}` }).expect(200)).body.id;
        const deliveries = () => call('get', `/api/v1/WebhookDelivery?where[0][type]=equals&where[0][attribute]=webhookId&where[0][value]=${hook}`).expect(200).then((res) => res.body.list);
        if (delivered) {
          const [delivery] = await eventually(deliveries, (list) => list[0]?.status === 'Delivered');
          const [got] = (await receiver.waitFor(before + 1)).slice(before);
          expect(got.body).toMatchObject({ deliveryId: delivery.id, webhookId: hook, event: { entityType: 'Brand', recordId: brand, action: 'Create' } });
          expect(verifies(got, 'pim-secret')).toBe(true);
        } else {
          // The first attempt is refused before connecting; the delivery waits for its next attempt.
          // (`attempts` counts an attempt from when it is claimed: its outcome is recorded a moment later.)
          const [delivery] = await eventually(deliveries, (list) => list[0]?.attempts >= 1 && list[0]?.lastError !== null);
          expect(delivery).toMatchObject({ status: 'Pending', lastStatusCode: null, lastError: 'refused: host 127.0.0.1 is a private or reserved address' });
          expect(receiver.connections()).toBe(connections);
          expect(receiver.received.length).toBe(before);
        }
      } finally {
        await pim.api.close();
        await db.drop();
      }
    });
  }
});
