import http from 'node:http';
import request from 'supertest';
import { ADMIN, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';

/** JSON text of `{"a": {"a": … 1 …}}`, `depth` objects deep (built as text: JSON.stringify overflows first). */
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** JSON text of `[[ … 1 … ]]`, `depth` arrays deep. */
const nestedArray = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

/** CONTRACT §17: no input makes a 500; limits answer 4xx and change nothing. */
describe.each(TEST_DBS)('limits of input on %s', (kind) => {
  let t: TestApi;
  const errors: string[] = [];
  // Room for long query strings, as the example server gives (Node's default is 16 KiB).
  let server: http.Server;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, logger: { info() {}, warn() {}, error: (facts: unknown, message?: string) => void errors.push(message ?? String(facts)) } });
    server = http.createServer({ maxHeaderSize: 512 * 1024 }, t.app);
  });
  afterAll(async () => {
    server.close();
    await t.close();
  });
  afterEach(() => expect(errors.splice(0)).toEqual([]));

  const total = async (path: string) => (await t.get(`${path}?totalOnly=true`).expect(200)).body.total as number;
  const raw = (path: string, text: string, method: 'post' | 'patch' = 'post') =>
    request(t.server)[method](path).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send(text);

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('answers a body of many unknown keys with 100 issues and a short message, the others counted, and stores nothing', async () => {
      const keys = Array.from({ length: 50_000 }, (_, i) => `unknownKey${i}`);
      const body = JSON.stringify(Object.fromEntries([['name', 'many keys'], ...keys.map((k) => [k, 1])]));
      const before = await total(`${base}/Product`);
      const id = (await t.post(`${base}/Product`, { name: 'target' }).expect(200)).body.id;
      for (const res of [await raw(`${base}/Product`, body), await raw(`${base}/Product/${id}`, body, 'patch'), await raw('/api/entityRestore', body)]) {
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('CORE_UNKNOWN_FIELD');
        expect(res.body.error.details.issues).toHaveLength(100);
        expect(res.body.error.details.issues.every((issue: { code: string }) => issue.code === 'unknown_field')).toBe(true);
        // entityRestore takes no name either
        expect([49_900, 49_901]).toContain(res.body.error.details.issuesOmitted);
        expect(res.body.error.message).toMatch(/unknownKey1[89] and 4998[01] more$/);
        expect(res.text.length).toBeLessThan(20_000);
      }
      expect(await total(`${base}/Product`)).toBe(before + 1);
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body.name).toBe('target');
    });

    it('refuses JSON nested deeper than 64 levels in any body (400), and stores nothing', async () => {
      const [products, jobs] = [await total(`${base}/Product`), await total(`${base}/Job`)];
      // The body is level 1: specs may hold 63 levels, not 64.
      await raw(`${base}/Product`, `{"name":"deep ok","specs":${nestedObject(63)}}`).expect(200);
      const refused = [
        await raw(`${base}/Product`, `{"name":"too deep","specs":${nestedObject(64)}}`),
        await raw(`${base}/Product`, `{"name":"far too deep","specs":${nestedObject(5000)}}`),
        await raw(`${base}/upsert`, `[{"entity":"Product","payload":{"name":"x","specs":${nestedObject(5000)}}}]`),
        await raw(`${base}/upsertAsync`, `[{"entity":"Product","payload":{"name":"x","specs":${nestedObject(5000)}}}]`),
        await raw(`${base}/upsertAsync`, nestedArray(5000)),
        await raw(`${base}/entityMassUpdate`, `{"entityName":"Product","where":${nestedArray(3000)},"values":{"mpn":"x"}}`),
        await request(t.server).post(`${base}/userSession/cookie`).set('Content-Type', 'application/json').send(`{"userName":${nestedArray(100)}}`),
      ];
      for (const res of refused) {
        expect(res.status).toBe(400);
        expect(res.body.error).toEqual({ code: 'CORE_INVALID_JSON', message: 'The body must not nest objects and arrays deeper than 64 levels', details: { maxDepth: 64 } });
      }
      expect(await total(`${base}/Product`)).toBe(products + 1);
      expect(await total(`${base}/Job`)).toBe(jobs);
    });

    it('queues a job whose input nests 64 levels and refuses 65 (400) on every route that queues one, creating no job', async () => {
      const ids = JSON.stringify(Array.from({ length: 201 }, (_, i) => `none-${i}`));
      // Bodies of `depth` levels in all (the body is level 1), the deepest part in a jsonObject field.
      const bodies = (depth: number): [string, string, 'post' | 'patch'][] => [
        [`${base}/upsertAsync`, `[{"entity":"Product","payload":{"name":"deep job","specs":${nestedObject(depth - 3)}}}]`, 'post'],
        // A mass update by where, and one of more ids than are updated at once: both run as jobs.
        ...(['post', 'patch'] as const).flatMap((method): [string, string, 'post' | 'patch'][] => [
          [`${base}/entityMassUpdate`, `{"entityName":"Product","where":[{"type":"equals","attribute":"id","value":"none"}],"values":{"specs":${nestedObject(depth - 2)}}}`, method],
          [`${base}/entityMassUpdate`, `{"entityName":"Product","ids":${ids},"values":{"specs":${nestedObject(depth - 2)}}}`, method],
        ]),
      ];
      const jobs = await total(`${base}/Job`);
      for (const [path, text, method] of bodies(65)) {
        const res = await raw(path, text, method);
        expect({ path, method, status: res.status, error: res.body.error }).toEqual({
          path,
          method,
          status: 400,
          error: expect.objectContaining({ code: 'CORE_INVALID_JSON', details: { maxDepth: 64 } }),
        });
      }
      expect(await total(`${base}/Job`)).toBe(jobs);
      // At the limit each queues its job (awaited, so that it changes nothing under the next test).
      for (const [path, text, method] of bodies(64)) {
        const res = await raw(path, text, method);
        expect({ path, method, status: res.status }).toEqual({ path, method, status: 200 });
        expect((await finishedJob(t, { base, id: res.body.jobId })).status).toBe('Success');
      }
      expect(await total(`${base}/Job`)).toBe(jobs + 5);
    });

    it('refuses a where nested deeper than 20 levels, a value nested 4,000 deep included, in both forms (400)', async () => {
      const json = (value: unknown) => `${base}/Product?where=${encodeURIComponent(`[{"type":"equals","attribute":"name","value":${value}}]`)}`;
      const bracket = (depth: number) => `${base}/Product?where%5B0%5D%5Btype%5D=in&where%5B0%5D%5Battribute%5D=name&where%5B0%5D%5Bvalue%5D${'%5B0%5D'.repeat(depth)}=x`;
      for (const path of [json(nestedArray(4000)), json(nestedObject(4000)), json(nestedArray(50)), bracket(4000), bracket(50)]) {
        const res = await request(server).get(path).set('Authorization-Token', t.token);
        expect({ status: res.status, error: res.body.error }).toEqual({
          status: 400,
          error: { code: 'CORE_INVALID_QUERY', message: 'where must not nest deeper than 20 levels', details: {} },
        });
      }
      await request(server).get(bracket(1)).set('Authorization-Token', t.token).expect(200);
    });

    it('refuses a query string of more parameters than it reads (400) rather than dropping the rest', async () => {
      const tag = `params-${_g}-${kind}`;
      await t.post(`${base}/Product`, { name: tag, sku: `${tag}-kept` }).expect(200);
      await t.post(`${base}/Product`, { name: tag, sku: `${tag}-excluded` }).expect(200);
      const notIn = (count: number) =>
        [
          `where[0][type]=equals&where[0][attribute]=name&where[0][value]=${tag}`,
          'where[1][type]=notIn&where[1][attribute]=sku',
          ...Array.from({ length: count }, (_, i) => `where[1][value][]=v${i}`),
          `where[1][value][]=${tag}-excluded`,
        ].join('&');
      const get = (query: string) => request(server).get(`${base}/Product?${query}&select=sku`).set('Authorization-Token', t.token);
      const fits = await get(notIn(4990)).expect(200);
      expect(fits.body.list.map((r: { sku: string }) => r.sku)).toEqual([`${tag}-kept`]);
      const over = await get(notIn(6000)).expect(400);
      expect(over.body.error).toMatchObject({ code: 'CORE_INVALID_QUERY', message: expect.stringContaining('more than 5000 parameters') });
      // Every route reads the query the same way, those that read only one parameter too.
      const unlink = await request(server).delete(`${base}/Product/x/categories?${notIn(6000)}&id=y`).set('Authorization-Token', t.token).expect(400);
      expect(unlink.body.error.code).toBe('CORE_INVALID_QUERY');
    });

    it('refuses a query string it cannot read (400) on every route, those that read no parameter and the public ones included, and writes nothing', async () => {
      const tag = `unreadable-${_g}-${kind}`;
      const brand = (await t.post(`${base}/Brand`, { name: tag }).expect(200)).body;
      const basic = `Basic ${Buffer.from(`${ADMIN.userName}:${ADMIN.password}`).toString('base64')}`;
      const token = (req: request.Test) => req.set('Authorization-Token', t.token);
      for (const query of ['note=%FF', 'x%C3=1', 'note=a%00b', '__proto__[x]=1', 'where[0][constructor]=1']) {
        const sent = [
          await token(request(server).get(`${base}/metadata?${query}`)),
          await request(server).get(`${base}/userSession?${query}`).set('Authorization', basic),
          await token(request(server).get(`${base}/Brand/${brand.id}?${query}`)),
          await token(request(server).post(`${base}/Brand?${query}`)).send({ name: `${tag}-created` }),
          await token(request(server).patch(`${base}/Brand/${brand.id}?${query}`)).send({ code: 'changed' }),
          await token(request(server).delete(`${base}/Brand/${brand.id}?${query}`)),
          await token(request(server).post(`${base}/upsert?${query}`)).send([{ entity: 'Brand', payload: { name: `${tag}-upserted` } }]),
          await token(request(server).post(`${base}/startEntityListening?${query}`)).send({ entityName: 'Brand', entityId: brand.id }),
          await request(server).get(`/data/publicData.json?${query}`),
          await request(server).get(`/apidocs/openapi.json?${query}`),
        ];
        for (const res of sent) {
          expect([res.status, res.body.error?.code, res.get('X-Status-Reason')]).toEqual([400, 'CORE_INVALID_QUERY', res.body.error?.message]);
        }
      }
      expect((await t.get(`${base}/Brand/${brand.id}`).expect(200)).body.code).toBeNull();
      const named = await t.get(`${base}/Brand?select=name&where[0][type]=startsWith&where[0][attribute]=name&where[0][value]=${tag}`).expect(200);
      expect(named.body.list.map((b: { name: string }) => b.name)).toEqual([tag]);
      // Brackets nested deeper than the parser reads: named as the parameter they are in.
      const deep = await token(request(server).get(`${base}/metadata?view${'[a]'.repeat(60)}=1`));
      expect([deep.status, deep.body.error]).toEqual([400, { code: 'CORE_INVALID_QUERY', message: 'The query parameter view must not nest brackets deeper than 44 levels', details: {} }]);
      const deepWhere = await token(request(server).get(`${base}/metadata?where${'[0]'.repeat(60)}=1`));
      expect(deepWhere.body.error.message).toBe('where must not nest deeper than 20 levels');
    });
  });
});

describe.each(TEST_DBS)('the size of an upsert on %s', (kind) => {
  let t: TestApi;
  let small: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    small = await startTestApi(kind, { entities: testEntities, maxUpsertItems: 3 });
  });
  afterAll(async () => {
    await small.close();
    await t.close();
  });

  const items = (tag: string, count: number) => Array.from({ length: count }, (_, i) => ({ entity: 'Brand', payload: { name: `${tag}-${i}` } }));
  const total = async (on: TestApi) => (await on.get('/api/Brand?totalOnly=true').expect(200)).body.total as number;

  it.each([
    ['A', '/api/upsert', '/api'],
    ['B', '/api/v1/MassActions/action/upsert', '/api/v1'],
  ])('takes at most 10,000 items at once (413), maxUpsertItems fewer, and any number through upsertAsync (generation %s)', async (g, path, base) => {
    const [before, smallBefore] = [await total(t), await total(small)];
    const over = await t.post(path, items(`over-${g}`, 10_001)).expect(413);
    expect(over.body.error).toEqual({
      code: 'CORE_PAYLOAD_TOO_LARGE',
      message: 'An upsert takes at most 10000 items, not 10001; send more through upsertAsync',
      details: { maxUpsertItems: 10_000, items: 10_001 },
    });
    expect(await total(t)).toBe(before);
    expect((await small.post(path, items(`small-${g}`, 4)).expect(413)).body.error.details).toEqual({ maxUpsertItems: 3, items: 4 });
    expect(await total(small)).toBe(smallBefore);
    expect((await small.post(path, items(`small-${g}`, 3)).expect(200)).body).toHaveLength(3);
    const { jobId } = (await small.post(`${base}/upsertAsync`, items(`async-${g}`, 7)).expect(200)).body;
    let job = { status: 'Pending', result: [] as unknown[] };
    for (let i = 0; i < 200 && !['Success', 'Failed'].includes(job.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      job = (await small.get(`${base}/Job/${jobId}`).expect(200)).body;
    }
    expect({ status: job.status, results: job.result.length }).toEqual({ status: 'Success', results: 7 });
    expect(await total(small)).toBe(smallBefore + 10);
  });
});
