import { gzip } from 'node:zlib';
import request from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

/** Inputs at the edges: each is a clear 4xx that changes nothing, or an answer that matches its filter. */
describe.each(TEST_DBS)('input at the edges on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  const total = async (path: string) => (await t.get(`${path}?totalOnly=true`).expect(200)).body.total as number;
  const where = (items: unknown[]) => `where=${encodeURIComponent(JSON.stringify(items))}`;

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('refuses text with a NUL character in any body (400), and stores nothing', async () => {
      const brands = await total(`${base}/Brand`);
      const products = await total(`${base}/Product`);
      const refused = [
        await t.post(`${base}/Brand`, { name: 'nul\u0000brand' }),
        await t.post(`${base}/Product`, { name: 'x', brand: { name: 'a\u0000b' } }),
        await t.post(`${base}/Product`, { name: 'x', specs: { note: 'a\u0000' } }),
        await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: ['a\u0000b'] }),
        await t.post(`${base}/upsert`, [{ entity: 'Brand', payload: { name: 'n\u0000' } }]),
      ];
      for (const res of refused) {
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('CORE_VALIDATION_FAILED');
      }
      const id = (await t.post(`${base}/Product`, { name: 'nul target' }).expect(200)).body.id;
      await t.patch(`${base}/Product/${id}`, { mpn: 'a\u0000' }).expect(400);
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body.mpn).toBeNull();
      expect(await total(`${base}/Brand`)).toBe(brands);
      expect(await total(`${base}/Product`)).toBe(products + 1);
      // A backslash before the text `u0000` is no NUL.
      const text = (await t.post(`${base}/Brand`, { name: `back\\u0000slash ${base}` }).expect(200)).body.name;
      expect(text).toBe(`back\\u0000slash ${base}`);
    });

    it('refuses half a surrogate pair in any text of a body (400), alike on both databases, and stores nothing', async () => {
      const brands = await total(`${base}/Brand`);
      const halves = ['\ud800', 'a\udc00b', '\ud83d x', 'x \ude00', '\ude00\ud83d'];
      for (const half of halves) {
        // JSON.stringify writes each half as an escape (`\ud800`), as any client would.
        for (const res of [await t.post(`${base}/Brand`, { name: half }), await t.post(`${base}/upsert`, [{ entity: 'Brand', payload: { name: half } }])]) {
          expect(res.status).toBe(400);
          expect(res.body.error).toMatchObject({ code: 'CORE_VALIDATION_FAILED', details: { issues: [{ code: 'lone_surrogate' }] } });
        }
      }
      expect(await total(`${base}/Brand`)).toBe(brands);
      // A whole pair, escaped, is one character (an emoji); a backslash before the text `ud800` is no escape.
      const raw = (text: string) => t.post(`${base}/Brand`).set('Content-Type', 'application/json').send(`{"name": "${text} ${base}"}`);
      expect((await raw('pair \\ud83d\\ude00').expect(200)).body.name).toBe(`pair 😀 ${base}`);
      expect((await raw('back\\\\ud800slash').expect(200)).body.name).toBe(`back\\ud800slash ${base}`);
    });

    it('refuses a body whose bytes are not UTF-8 (400 CORE_INVALID_JSON), instead of storing U+FFFD', async () => {
      const brands = await total(`${base}/Brand`);
      for (const bytes of [Buffer.from('{"name": "\xff"}', 'latin1'), Buffer.from([...Buffer.from('{"name": "'), 0xc0, 0xaf, 0xed, 0xa0, 0x80, ...Buffer.from('"}')])]) {
        const res = await request(t.server).post(`${base}/Brand`).set('Authorization-Token', t.token).set('Content-Type', 'application/json').serialize((raw: Buffer) => raw as never).send(bytes).expect(400);
        expect(res.body.error.code).toBe('CORE_INVALID_JSON');
      }
      expect(await total(`${base}/Brand`)).toBe(brands);
      const fine = await request(t.server).post(`${base}/Brand`).set('Authorization-Token', t.token).set('Content-Type', 'application/json; charset=utf-8').serialize((raw: Buffer) => raw as never).send(Buffer.from(`{"name": "Grüße ${base}"}`)).expect(200);
      expect(fine.body.name).toBe(`Grüße ${base}`);
    });

    it('answers a path that is not valid percent-encoding with 400', async () => {
      const paths = [`${base}/Product/%FF`, `${base}/%FF`, `${base}/Product/%E0%A4%A`];
      for (const path of paths) {
        const res = await t.get(path).expect(400);
        expect(res.body.error.code).toBe('CORE_INVALID_PATH');
      }
      await t.patch(`${base}/Product/%FF`, { name: 'x' }).expect(400);
      await t.del(`${base}/Product/%FF`).expect(400);
    });

    it('refuses an empty client id (400) and names the id of a taken one (409)', async () => {
      const empty = await t.post(`${base}/Brand`, { id: '', name: `empty id ${base}` }).expect(400);
      expect(empty.body.error.code).toBe('CORE_INVALID_ID');
      const id = (await t.post(`${base}/Brand`, { name: `taken id ${base}` }).expect(200)).body.id;
      const taken = await t.post(`${base}/Brand`, { id, name: `second ${base}` }).expect(409);
      expect(taken.body.error).toMatchObject({ code: 'CORE_UNIQUE_VIOLATION', details: { entity: 'Brand', fields: ['id'] } });
    });
  });

  it.each(GENERATIONS)('negates with not: rows where the inner condition meets a NULL field are kept (generation %s)', async (_g, base) => {
    const tag = `not-${_g}-${Date.now()}`;
    const ids: string[] = [];
    for (const body of [{ sku: `${tag}-1`, price: 10 }, { sku: `${tag}-2`, price: 1 }, { price: null }, { sku: `${tag}-4` }]) {
      ids.push((await t.post(`${base}/Product`, { name: tag, ...body }).expect(200)).body.id);
    }
    const names = async (items: unknown[]) => {
      const res = await t.get(`${base}/Product?${where([{ type: 'equals', attribute: 'name', value: tag }, ...items])}&select=id`).expect(200);
      return res.body.list.map((r: { id: string }) => r.id);
    };
    expect(await names([{ type: 'not', value: [{ type: 'equals', attribute: 'sku', value: `${tag}-1` }] }])).toEqual(ids.slice(1));
    expect(await names([{ type: 'not', value: [{ type: 'greaterThan', attribute: 'price', value: 5 }] }])).toEqual(ids.slice(1));
    expect(await names([{ type: 'not', value: [{ type: 'isNull', attribute: 'sku' }] }])).toEqual([ids[0], ids[1], ids[3]]);
    // Bracket form, nested: not (or (sku equals -1, price less than 5)).
    const bracket =
      'where[0][type]=equals&where[0][attribute]=name&where[0][value]=' +
      tag +
      `&where[1][type]=not&where[1][value][0][type]=or&where[1][value][0][value][0][type]=equals&where[1][value][0][value][0][attribute]=sku&where[1][value][0][value][0][value]=${tag}-1` +
      '&where[1][value][0][value][1][type]=lessThan&where[1][value][0][value][1][attribute]=price&where[1][value][0][value][1][value]=5';
    const res = await t.get(`${base}/Product?${bracket.replace(/\[/g, '%5B').replace(/\]/g, '%5D')}&select=id`).expect(200);
    expect(res.body.list.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[3]]);
  });

  it.each(GENERATIONS)('counts a record created this second as past, not future (generation %s)', async (_g, base) => {
    const id = (await t.post(`${base}/Product`, { name: 'just now' }).expect(200)).body.id;
    const matches = async (type: string) => (await t.get(`${base}/Product?${where([{ type: 'equals', attribute: 'id', value: id }, { type, attribute: 'createdAt' }])}&totalOnly=true`).expect(200)).body.total;
    expect(await matches('past')).toBe(1);
    expect(await matches('future')).toBe(0);
  });

  it.each(GENERATIONS)('refuses a where nested too deep or holding too many values (400), in both forms (generation %s)', async (_g, base) => {
    let item: Record<string, unknown> = { type: 'isNotNull', attribute: 'id' };
    for (let depth = 0; depth < 6; depth++) item = { type: depth % 2 ? 'and' : 'or', value: [item] };
    await t.get(`${base}/Product?${where([item])}&totalOnly=true`).expect(200);
    const bracket = (depth: number) => {
      let key = 'where[0]';
      for (let d = 0; d < depth; d++) key += '[value][0]';
      const groups = Array.from({ length: depth }, (_, d) => `${'where[0]' + '[value][0]'.repeat(d)}[type]=or`);
      return [...groups, `${key}[type]=isNotNull`, `${key}[attribute]=id`].join('&').replace(/\[/g, '%5B').replace(/\]/g, '%5D');
    };
    await t.get(`${base}/Product?${bracket(6)}&totalOnly=true`).expect(200);
    await t.get(`${base}/Product?${bracket(20)}&totalOnly=true`).expect(200);
    const deep = await t.get(`${base}/Product?${bracket(21)}&totalOnly=true`).expect(400);
    expect(deep.body.error).toMatchObject({ code: 'CORE_INVALID_QUERY', message: 'where must not nest deeper than 20 levels' });
    for (let depth = 6; depth < 25; depth++) item = { type: 'and', value: [item] };
    expect((await t.get(`${base}/Product?${where([item])}&totalOnly=true`).expect(400)).body.error.message).toBe('where must not nest deeper than 20 levels');
    // Exactly the limit: the operator and field names are no values.
    const limit = await t.post(`${base}/entityMassUpdate`, {
      entityName: 'Product',
      where: [{ type: 'in', attribute: 'id', value: Array.from({ length: 10_000 }, (_, i) => `none${i}`) }],
      values: { mpn: 'x' },
    });
    expect([limit.status, limit.body.error]).toEqual([200, undefined]);
    const many = await t.post(`${base}/entityMassUpdate`, {
      entityName: 'Product',
      where: [{ type: 'in', attribute: 'id', value: Array.from({ length: 10_001 }, (_, i) => `id${i}`) }],
      values: { mpn: 'x' },
    });
    expect(many.status).toBe(400);
    expect(many.body.error.message).toBe('where must not hold more than 10000 values');
  });

  it.each(GENERATIONS)('refuses a where of more than 500 conditions (400): SQLite cannot join that many terms (generation %s)', async (_g, base) => {
    const or = { type: 'or', value: Array.from({ length: 1000 }, (_, i) => ({ type: 'equals', attribute: 'mpn', value: `q${i}` })) };
    const res = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: [or], values: { description: 'x' } }).expect(400);
    expect(res.body.error.message).toBe('where must not hold more than 500 conditions');
    const fits = { type: 'or', value: Array.from({ length: 400 }, (_, i) => ({ type: 'equals', attribute: 'mpn', value: `q${i}` })) };
    await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: [fits], values: { description: 'x' } }).expect(200);
  });

  it.each(GENERATIONS)('refuses a number too large for any column (1e400 parses to Infinity) and keeps the stored value (generation %s)', async (_g, base) => {
    const id = (await t.post(`${base}/Product`, { name: 'finite', price: 1.5 }).expect(200)).body.id;
    for (const raw of ['{"price":1e400}', '{"price":-1e400}']) {
      const res = await request(t.server).patch(`${base}/Product/${id}`).set('Authorization-Token', t.token).set('Content-Type', 'application/json').send(raw).expect(400);
      expect(res.body.error.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: ['price'], code: 'too_big' })]));
    }
    expect((await t.get(`${base}/Product/${id}`).expect(200)).body.price).toBe(1.5);
  });

  it.each(GENERATIONS)('answers entityMassUpdate without entityName with 400, and updates an id listed twice once (generation %s)', async (_g, base) => {
    expect((await t.post(`${base}/entityMassUpdate`, { ids: [], values: {} }).expect(400)).body.error.code).toBe('CORE_VALIDATION_FAILED');
    const id = (await t.post(`${base}/Product`, { name: 'twice' }).expect(200)).body.id;
    expect((await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id, id], values: { mpn: 'b' } }).expect(200)).body).toEqual({ updated: 1, errors: [] });
  });

  it.each(GENERATIONS)('refuses entityMassUpdate with a bad where at once (400), without starting a job (generation %s)', async (_g, base) => {
    const jobs = await total(`${base}/Job`);
    for (const bad of [[{ type: 'bogusOp', attribute: 'name', value: 'x' }], [{ type: 'equals', attribute: 'nofield', value: 'x' }]]) {
      const res = await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: bad, values: { mpn: 'z' } }).expect(400);
      expect(res.body.error.code).toBe('CORE_INVALID_QUERY');
    }
    expect(await total(`${base}/Job`)).toBe(jobs);
  });
});

describe.each(TEST_DBS)('bodies at the edges on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('answers a body that does not match its Content-Encoding with 400 (generation %s)', async (_g, base) => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await request(t.server)
        .post(`${base}/Brand`)
        .set('Authorization-Token', t.token)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .send(`{"name":"not compressed ${base}"}`)
        .expect(400);
      expect(res.body.error.code).toBe('CORE_INVALID_JSON');
    }
    const gzipped = await new Promise<Buffer>((resolve, reject) => gzip(`{"name":"compressed ${base}"}`, (error, out) => (error ? reject(error) : resolve(out))));
    const compressed = request(t.server).post(`${base}/Brand`).set('Authorization-Token', t.token).set('Content-Type', 'application/json').set('Content-Encoding', 'gzip');
    // Sent as the bytes they are, not serialized as JSON.
    await compressed.serialize((body: Buffer) => body as never).send(gzipped).expect(200);
  });

  it.each(GENERATIONS)('refuses unknown keys in bodies that are not records (400), and fails an upsert item with one (generation %s)', async (_g, base) => {
    const id = (await t.post(`${base}/Product`, { name: 'keys' }).expect(200)).body.id;
    const refused = [
      await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { mpn: 'm' }, bogus: 1 }),
      await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [id], bogus: 1 }),
      await request(t.server).post(`${base}/userSession/cookie`).send({ userName: 'admin', password: 'admin-test-password', remember: true }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'CORE_UNKNOWN_FIELD', details: { issues: [{ path: [expect.any(String)], code: 'unknown_field' }] } });
    }
    expect((await t.get(`${base}/Product/${id}`).expect(200)).body.mpn).toBeNull();
    const upsert = await t.post(`${base}/upsert`, [{ entity: 'Brand', payload: { name: 'upsert keys' }, bogus: 1 }]).expect(200);
    expect(upsert.body).toEqual([{ status: 'Failed', stored: false, message: 'Unknown key in an upsert item: bogus' }]);
  });

  it.each(GENERATIONS)('always answers details in an error body, empty when there is nothing to point at (generation %s)', async (_g, base) => {
    const res = await request(t.server).get(`${base}/Brand`).expect(401);
    expect(res.body).toEqual({ error: { code: 'CORE_UNAUTHORIZED', message: 'Authentication required', details: {} } });
  });
});
