import { definePlugin } from '@entity-records/core';
import { GENERATIONS, recordQueries as recordAll, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';
import { userWithRole } from '../../../../test/support/users';
import { requestFingerprint } from '../../src/idempotency/fingerprint';

/** `Idempotency-Key` on create, upsert, upsertAsync and entityMassUpdate (CONTRACT §16). */
describe.each(TEST_DBS)('idempotency keys on %s', (kind) => {
  let t: TestApi;
  /** The next Brand create through the hook below fails with a 500 once. */
  let failNextBrand = false;
  let keys = 0;
  const newKey = () => `key-${kind}-${(keys += 1)}-${Date.now()}`;
  const failingOnce = definePlugin({
    name: 'fails-once',
    setup(api) {
      api.onRecord('beforeCreate', 'Brand', () => {
        if (!failNextBrand) return;
        failNextBrand = false;
        throw new Error('the database went away for a moment');
      });
    },
  });

  beforeAll(async () => {
    // Tokens and roles stay cached for the whole file: the query counts below would otherwise take
    // in a reload of the token (SQLite's cache lasts half a second) when the machine is slow.
    t = await startTestApi(kind, { entities: testEntities, plugins: [failingOnce], auth: { tokenCacheSeconds: 3600 } });
  });
  afterAll(() => t.close());

  const table = () => t.api.database.knex('idempotency_key');
  const countWhere = async (entity: string, attribute: string, value: unknown): Promise<number> =>
    (await t.get(`/api/${entity}?totalOnly=true&where[0][type]=equals&where[0][attribute]=${attribute}&where[0][value]=${encodeURIComponent(String(value))}`).expect(200)).body.total;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('replays a create: the same status, body and ETag, marked Idempotent-Replayed, and writes nothing', async () => {
      const key = newKey();
      const name = `Once ${key}`;
      const first = await t.post(`${base}/Product`, { name, price: 2 }).set('Idempotency-Key', key).expect(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(first.headers.etag).toBeDefined();
      // Changed meanwhile: a replay answers the first answer and does not write again.
      await t.patch(`${base}/Product/${first.body.id}`, { price: 3 }).expect(200);
      const again = await t.post(`${base}/Product`, { price: 2, name }).set('Idempotency-Key', key).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      // what a cache keeps of the record's answer too (CONTRACT §16 versions)
      expect([again.headers.vary, again.headers['cache-control']]).toEqual([first.headers.vary, 'private, no-cache']);
      expect(first.headers.vary).toContain('Authorization-Token');
      expect(await countWhere('Product', 'name', name)).toBe(1);
      expect((await t.get(`${base}/Product/${first.body.id}`).expect(200)).body.price).toBe(3);
      expect(Number((await table().where({ idem_key: key }).count({ n: '*' }).first())?.n)).toBe(1);
    });

    it('answers 422 for the same key with another body, path or method, and writes nothing', async () => {
      const key = newKey();
      const first = await t.post(`${base}/Brand`, { name: `Brand ${key}` }).set('Idempotency-Key', key).expect(200);
      const other = await t.post(`${base}/Brand`, { name: `Other ${key}` }).set('Idempotency-Key', key).expect(422);
      expect(other.body.error).toMatchObject({ code: 'CORE_IDEMPOTENCY_MISMATCH', details: { key } });
      expect(other.headers['x-status-reason']).toContain('another request');
      const otherBase = base === '/api' ? '/api/v1' : '/api';
      await t.post(`${otherBase}/Brand`, { name: `Brand ${key}` }).set('Idempotency-Key', key).expect(422);
      await t.post(`${base}/Category`, { name: `Brand ${key}`, code: key }).set('Idempotency-Key', key).expect(422);
      expect(await countWhere('Brand', 'name', `Other ${key}`)).toBe(0);
      expect(await countWhere('Category', 'code', key)).toBe(0);
      // The kept answer is still there for the right request.
      expect((await t.post(`${base}/Brand`, { name: `Brand ${key}` }).set('Idempotency-Key', key).expect(200)).body).toEqual(first.body);
    });

    it('keeps a refused write (4xx): a repeat gets the same answer, even once the cause is gone', async () => {
      const key = newKey();
      const sku = `dup-${key}`;
      await t.post(`${base}/Product`, { name: 'Holder', sku }).expect(200);
      const refused = await t.post(`${base}/Product`, { name: 'Second', sku }).set('Idempotency-Key', key).expect(409);
      expect(refused.body.error.code).toBe('CORE_UNIQUE_VIOLATION');
      const invalid = await t.post(`${base}/Product`, { name: 'Bad', price: 'x' }).set('Idempotency-Key', `${key}-b`).expect(400);
      const holder = (await t.get(`/api/Product?where[0][type]=equals&where[0][attribute]=sku&where[0][value]=${sku}`).expect(200)).body.list[0];
      await t.del(`${base}/Product/${holder.id}`).expect(200);
      const again = await t.post(`${base}/Product`, { name: 'Second', sku }).set('Idempotency-Key', key).expect(409);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(refused.body);
      expect(again.headers['x-status-reason']).toBe(refused.headers['x-status-reason']);
      const invalidAgain = await t.post(`${base}/Product`, { name: 'Bad', price: 'x' }).set('Idempotency-Key', `${key}-b`).expect(400);
      expect(invalidAgain.body).toEqual(invalid.body);
      expect(await countWhere('Product', 'sku', sku)).toBe(0);
    });

    it('replays an upsert without writing, and a mass update without applying it again', async () => {
      const key = newKey();
      const items = [0, 1, 2].map((i) => ({ entity: 'Product', payload: { sku: `${key}-${i}`, name: `U${i}` } }));
      const upsertPath = base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert';
      const first = await t.post(upsertPath, items).set('Idempotency-Key', key).expect(200);
      expect(first.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Created', 'Created']);
      const ids: string[] = first.body.map((r: { entity: { id: string } }) => r.entity.id);
      await t.patch(`${base}/Product/${ids[0]}`, { name: 'Renamed' }).expect(200);
      const again = await t.post(upsertPath, items).set('Idempotency-Key', key).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect((await t.get(`${base}/Product/${ids[0]}`).expect(200)).body.name).toBe('Renamed');

      const massKey = newKey();
      const mass = { entityName: 'Product', ids, values: { quantity: 5 } };
      const updated = await t.post(`${base}/entityMassUpdate`, mass).set('Idempotency-Key', massKey).expect(200);
      expect(updated.body).toMatchObject({ updated: 3 });
      await t.patch(`${base}/Product/${ids[1]}`, { quantity: 9 }).expect(200);
      const replayed = await t.post(`${base}/entityMassUpdate`, mass).set('Idempotency-Key', massKey).expect(200);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      expect(replayed.body).toEqual(updated.body);
      expect((await t.get(`${base}/Product/${ids[1]}`).expect(200)).body.quantity).toBe(9);
      // PATCH is another method: the same key and body are another request.
      await t.patch(`${base}/entityMassUpdate`, mass).set('Idempotency-Key', massKey).expect(422);
      // A mass update by `where` runs as a job: one job for the key.
      const whereKey = newKey();
      const byWhere = { entityName: 'Product', where: [{ type: 'in', attribute: 'id', value: ids }], values: { quantity: 6 } };
      const job = await t.patch(`${base}/entityMassUpdate`, byWhere).set('Idempotency-Key', whereKey).expect(200);
      expect(job.body.jobId).toEqual(expect.any(String));
      const jobAgain = await t.patch(`${base}/entityMassUpdate`, byWhere).set('Idempotency-Key', whereKey).expect(200);
      expect(jobAgain.headers['idempotent-replayed']).toBe('true');
      expect(jobAgain.body).toEqual(job.body);
    });

    it('starts one upsertAsync job for a key, however often it is sent', async () => {
      const key = newKey();
      const items = [{ entity: 'Product', payload: { sku: `${key}-async`, name: 'Async' } }];
      const first = await t.post(`${base}/upsertAsync`, items).set('Idempotency-Key', key).expect(200);
      const again = await t.post(`${base}/upsertAsync`, items).set('Idempotency-Key', key).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual({ jobId: first.body.jobId });
      const jobs = await t.api.database.knex('job').where('created_at', '>=', '2000-01-01').select('id', 'payload');
      expect(jobs.filter((j: { payload: unknown }) => String(typeof j.payload === 'string' ? j.payload : JSON.stringify(j.payload)).includes(`${key}-async`))).toHaveLength(1);
    });

    it('ignores the header on routes that do not take it', async () => {
      const key = newKey();
      const id = (await t.post(`${base}/Product`, { name: 'Patched' }).expect(200)).body.id;
      await t.patch(`${base}/Product/${id}`, { quantity: 1 }).set('Idempotency-Key', key).expect(200);
      await t.patch(`${base}/Product/${id}`, { quantity: 2 }).set('Idempotency-Key', key).expect(200);
      const list = await t.get(`${base}/Product?maxSize=1`).set('Idempotency-Key', '').expect(200);
      expect(list.headers['idempotent-replayed']).toBeUndefined();
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body.quantity).toBe(2);
      expect(await table().where({ idem_key: key }).select('idem_key')).toEqual([]);
    });
  });

  it('costs no query without the header; an insert and an update with a new key; an insert and a read for a replay', async () => {
    const create = (name: string, key?: string) => {
      const req = t.post('/api/Brand', { name });
      return (key ? req.set('Idempotency-Key', key) : req).expect(200);
    };
    // Jobs of earlier tests (mass updates, upsertAsync) end first: their statements are not the requests'.
    for (const { id } of await t.api.database.knex('job').whereIn('status', ['Pending', 'Running']).select('id')) await finishedJob(t, { base: '/api', id });
    await create(`Warm ${Date.now()}`);
    // The worker may still poll for jobs meanwhile: not the request's queries.
    const recordQueries = async (api: TestApi, fn: () => Promise<unknown>) => (await recordAll(api, fn)).filter((sql) => !/\bfrom "job"|^update "job"/.test(sql));
    const plain = await recordQueries(t, () => create(`Plain ${Date.now()}`));
    expect(plain.filter((sql) => /idempotency_key/.test(sql))).toEqual([]);
    const key = newKey();
    const keyed = await recordQueries(t, () => create(`Keyed ${key}`, key));
    expect(keyed.filter((sql) => /idempotency_key/.test(sql))).toEqual([expect.stringMatching(/^insert into/i), expect.stringMatching(/^update/i)]);
    expect(keyed.length).toBe(plain.length + 2);
    const replay = await recordQueries(t, () => create(`Keyed ${key}`, key));
    expect(replay).toEqual([expect.stringMatching(/^insert into .idempotency_key./i), expect.stringMatching(/^select .* from .idempotency_key./i)]);
  });

  it('refuses a malformed key with 400 and writes nothing', async () => {
    const name = `Malformed ${Date.now()}`;
    for (const key of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const res = await t.post('/api/Brand', { name }).set('Idempotency-Key', key).expect(400);
      expect(res.body.error).toMatchObject({ code: 'CORE_IDEMPOTENCY_KEY_INVALID', details: { issues: [{ path: ['Idempotency-Key'] }] } });
    }
    await t.post('/api/v1/upsert', [{ entity: 'Brand', payload: { name } }]).set('Idempotency-Key', 'x'.repeat(256)).expect(400);
    expect(await countWhere('Brand', 'name', name)).toBe(0);
    // The longest and the odd-looking keys that are allowed.
    await t.post('/api/Brand', { name }).set('Idempotency-Key', `${'k'.repeat(250)}-${Date.now() % 10000}`.slice(0, 255)).expect(200);
    await t.post('/api/Brand', { name: `${name} 2` }).set('Idempotency-Key', `a key with spaces & {} "${Date.now()}"`).expect(200);
  });

  it('keeps keys per user: another user with the same key and body writes its own record', async () => {
    const u = await userWithRole(t, { scopes: { Brand: { read: 'all', create: true, edit: 'all' } } });
    const key = newKey();
    const body = { name: `Per user ${key}`, code: 'a' };
    const mine = (await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(200)).body;
    const theirs = await u.post('/api/Brand', { ...body, name: `${body.name} (u)` }).set('Idempotency-Key', key).expect(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.id);
    const theirsAgain = await u.post('/api/Brand', { ...body, name: `${body.name} (u)` }).set('Idempotency-Key', key).expect(200);
    expect(theirsAgain.body.id).toBe(theirs.body.id);
    expect(theirsAgain.headers['idempotent-replayed']).toBe('true');
  });

  it('makes one write of two concurrent requests with one key: the other is refused (409) or replays', async () => {
    const key = newKey();
    const items = Array.from({ length: 3000 }, (_, i) => ({ entity: 'Product', payload: { sku: `${key}-${i}`, name: `P${i}`, price: i } }));
    const send = () => t.post('/api/upsert', items).set('Idempotency-Key', key);
    const [a, b] = await Promise.all([send(), send()]);
    const answers = [a, b].sort((x, y) => Number(x.headers['idempotent-replayed'] === 'true' || x.status === 409) - Number(y.headers['idempotent-replayed'] === 'true' || y.status === 409));
    expect(answers[0].status).toBe(200);
    expect(answers[0].headers['idempotent-replayed']).toBeUndefined();
    expect(answers[0].body.every((r: { status: string }) => r.status === 'Created')).toBe(true);
    if (answers[1].status === 409) {
      expect(answers[1].body.error.code).toBe('CORE_IDEMPOTENCY_IN_PROGRESS');
      expect(answers[1].headers['retry-after']).toBe('1');
    } else {
      expect(answers[1].status).toBe(200);
      expect(answers[1].headers['idempotent-replayed']).toBe('true');
      expect(answers[1].body).toEqual(answers[0].body);
    }
    const stored = (await t.get(`/api/Product?totalOnly=true&where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=${key}-`).expect(200)).body.total;
    expect(stored).toBe(3000);
    // Once answered, the repeat replays.
    const later = await send().expect(200);
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body).toEqual(answers[0].body);
  });

  it('answers 409 while the request holding the key runs, and lets a key go whose holder stopped renewing it', async () => {
    const { id: userId } = (await t.get('/api/v1/App/user').expect(200)).body.user;
    const key = newKey();
    const body = { name: `Held ${key}` };
    // The request holds the key as another process's request would: reserved, not answered yet.
    const now = Date.now();
    const fingerprint = requestFingerprint({ method: 'POST', url: '/api/Brand', body });
    await table().insert({ user_id: userId, idem_key: key, fingerprint, owner: 'other-process', created_at: now, lease_until: now + 60_000 });
    const busy = await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(409);
    expect(busy.body.error).toMatchObject({ code: 'CORE_IDEMPOTENCY_IN_PROGRESS', details: { key } });
    expect(busy.headers['retry-after']).toBe('1');
    await t.post('/api/Brand', { name: 'Another body' }).set('Idempotency-Key', key).expect(422);
    expect(await countWhere('Brand', 'name', body.name)).toBe(0);
    // The holder's process died: once its lease ran out, the key is taken over by the next request.
    await table().where({ idem_key: key }).update({ lease_until: now - 1 });
    const taken = await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(200);
    expect(taken.headers['idempotent-replayed']).toBeUndefined();
    expect(await countWhere('Brand', 'name', body.name)).toBe(1);
    const replayed = await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(taken.body);
  });

  it('does not keep a 5xx: the retry with the same key runs and can succeed', async () => {
    const key = newKey();
    const body = { name: `Retried ${key}` };
    failNextBrand = true;
    const failed = await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(500);
    expect(failed.body.error.code).toBe('CORE_INTERNAL');
    expect(await table().where({ idem_key: key }).select('idem_key')).toEqual([]);
    const retried = await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await countWhere('Brand', 'name', body.name)).toBe(1);
  });

  it('forgets a key after 24 hours: the same request then writes again', async () => {
    const key = newKey();
    const body = { name: `Expiring ${key}` };
    const first = (await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(200)).body;
    await table().where({ idem_key: key }).update({ created_at: Date.now() - 24 * 3_600_000 - 1000 });
    const fresh = await t.post('/api/Brand', { name: `${body.name} again` }).set('Idempotency-Key', key).expect(200);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.body.id).not.toBe(first.id);
    expect(await countWhere('Brand', 'name', `${body.name} again`)).toBe(1);
  });

  if (kind === 'postgres') {
    it('purges keys older than 24 hours when an instance starts, and keeps newer ones', async () => {
      const { id: userId } = (await t.get('/api/v1/App/user').expect(200)).body.user;
      const now = Date.now();
      const row = (key: string, createdAt: number) => ({ user_id: userId, idem_key: key, fingerprint: 'f'.repeat(64), owner: key, created_at: createdAt, lease_until: createdAt, status: 200, headers: '{}', body: '{}' });
      await table().insert([row('purge-old', now - 25 * 3_600_000), row('purge-new', now - 3_600_000)]);
      const second = await startTestApi(kind, { entities: testEntities }, t.db);
      try {
        const deadline = Date.now() + 5000;
        while ((await table().where({ idem_key: 'purge-old' }).select('idem_key')).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(await table().whereIn('idem_key', ['purge-old', 'purge-new']).pluck('idem_key')).toEqual(['purge-new']);
      } finally {
        await second.close();
      }
    });
  }
});

describe.each(TEST_DBS)('a long request with a short lease on %s', (kind) => {
  let t: TestApi;
  /** The first Brand create waits in its before-hook until this is called; later ones do not wait. */
  let release: (() => void) | undefined;
  const slow = definePlugin({
    name: 'slow-brands',
    setup(api) {
      api.onRecord('beforeCreate', 'Brand', () => (release ? undefined : new Promise<void>((resolve) => (release = resolve))));
    },
  });
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, plugins: [slow], idempotency: { leaseSeconds: 0.3 } });
  });
  afterAll(() => t.close());

  it('keeps its key past many leases by renewing it: a repeat meanwhile is 409, never a second write', async () => {
    const key = `slow-${kind}-${Date.now()}`;
    const body = { name: `Slow ${key}` };
    const first = t.post('/api/Brand', body).set('Idempotency-Key', key).then((res) => res);
    for (const deadline = Date.now() + 10_000; !release && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    expect(release).toBeDefined();
    // Four leases later the holder is still alive and renewing.
    await new Promise((r) => setTimeout(r, 1200));
    const meanwhile = await t.post('/api/Brand', body).set('Idempotency-Key', key);
    (release as () => void)();
    expect({ status: meanwhile.status, code: meanwhile.body.error?.code }).toEqual({ status: 409, code: 'CORE_IDEMPOTENCY_IN_PROGRESS' });
    const answered = await first;
    expect(answered.status).toBe(200);
    const again = await t.post('/api/Brand', body).set('Idempotency-Key', key).expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(answered.body);
    expect((await t.get(`/api/Brand?totalOnly=true&where[0][type]=equals&where[0][attribute]=name&where[0][value]=${encodeURIComponent(body.name)}`).expect(200)).body.total).toBe(1);
  });
});

describe('the OpenAPI document', () => {
  it('documents Idempotency-Key, Idempotent-Replayed, 409 and 422 on the operations that honour the key, and only there', async () => {
    const t = await startTestApi('sqlite', { entities: testEntities });
    try {
      const doc = (await t.get('/apidocs/openapi.json').expect(200)).body;
      expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false, schema: { maxLength: 255 } });
      expect(doc.components.responses.IdempotencyMismatch).toBeDefined();
      const honouring = [
        ['/api/Product', 'post'], ['/api/v1/Product', 'post'], ['/api/upsert', 'post'], ['/api/v1/MassActions/action/upsert', 'post'],
        ['/api/upsertAsync', 'post'], ['/api/v1/upsertAsync', 'post'], ['/api/entityMassUpdate', 'post'], ['/api/v1/entityMassUpdate', 'patch'],
      ];
      for (const [path, method] of honouring) {
        const operation = doc.paths[path][method];
        expect({ path, method, parameters: operation.parameters }).toEqual({ path, method, parameters: expect.arrayContaining([{ $ref: '#/components/parameters/IdempotencyKey' }]) });
        expect(operation.responses['200'].headers['Idempotent-Replayed']).toBeDefined();
        expect(operation.responses['409']).toEqual({ $ref: '#/components/responses/Conflict' });
        expect(operation.responses['422']).toEqual({ $ref: '#/components/responses/IdempotencyMismatch' });
      }
      for (const [path, method] of [['/api/Product/{id}', 'patch'], ['/api/entityRestore', 'post'], ['/api/Product', 'get']]) {
        expect(JSON.stringify(doc.paths[path][method])).not.toContain('IdempotencyKey');
      }
    } finally {
      await t.close();
    }
  });
});

describe('the idempotency key table', () => {
  it('is created by schema sync on an empty database', async () => {
    const db = await createTestDatabase('sqlite');
    const t = await startTestApi('sqlite', { entities: testEntities }, db);
    try {
      expect((await t.api.schemaDiff()).map((s) => s.description)).toEqual([]);
      expect(Number((await t.api.database.knex('idempotency_key').count({ n: '*' }).first())?.n)).toBe(0);
    } finally {
      await t.close();
    }
  });
});
