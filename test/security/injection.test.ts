import { GENERATIONS, startTestApi, type TestApi } from '../support/api';
import { TEST_DBS } from '../support/databases';
import { testEntities } from '../support/fixtures';

/**
 * Field names reach SQL only through the entity definitions: every name below must be refused
 * with 400 and a JSON error, whichever parameter carries it, and the data must stay as it was.
 */
const HOSTILE_NAMES = [
  'name; drop table product--',
  'name; drop table product; --',
  '"name"',
  'name) or (1=1',
  "name' or '1'='1",
  'id desc, (select 1)',
  '(select id from "user")',
  '\u2018name\u2019',
  '\u201cname\u201d',
  '`name`',
  '[name]',
  'name/**/',
  'name--',
  'name\n--',
  'name\u0000',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'n'.repeat(5000),
  'brand.name',
  'product.id',
  'product.name',
  'l_brand.name',
  'deleted',
  'created_at',
  'brand_id',
  '*',
  'NAME',
  'name asc',
  '1',
];
/** Names a comma-separated `select` would split into valid parts are left out of that channel. */
const SELECT_NAMES = HOSTILE_NAMES.filter((n) => !n.includes(','));

const enc = encodeURIComponent;
const CHANNELS: [string, string[], (name: string) => string][] = [
  ['sortBy', HOSTILE_NAMES, (n) => `sortBy=${enc(n)}`],
  ['sortBy descending', HOSTILE_NAMES, (n) => `sortBy=${enc(n)}&asc=false`],
  ['orderBy', HOSTILE_NAMES, (n) => `orderBy=${enc(n)}`],
  ['select', SELECT_NAMES, (n) => `select=${enc(n)}`],
  ['select after a valid field', SELECT_NAMES, (n) => `select=name,${enc(n)}`],
  ['where[][attribute] (bracket form)', HOSTILE_NAMES, (n) => `where[0][type]=equals&where[0][attribute]=${enc(n)}&where[0][value]=x`],
  ['where[][attribute] nested (bracket form)', HOSTILE_NAMES, (n) =>
    `where[0][type]=or&where[0][value][0][type]=isNull&where[0][value][0][attribute]=${enc(n)}`],
  ['where[][attribute] (JSON form)', HOSTILE_NAMES, (n) => `where=${enc(JSON.stringify([{ type: 'equals', attribute: n, value: 'x' }]))}`],
  ['where[][attribute] with isNull (JSON form)', HOSTILE_NAMES, (n) => `where=${enc(JSON.stringify([{ type: 'isNull', attribute: n }]))}`],
  ['where[][attribute] with linkedWith (JSON form)', HOSTILE_NAMES, (n) =>
    `where=${enc(JSON.stringify([{ type: 'linkedWith', attribute: n, value: ['x'] }]))}`],
  ['where[][type]', HOSTILE_NAMES, (n) => `where=${enc(JSON.stringify([{ type: n, attribute: 'name', value: 'x' }]))}`],
  ['where[][timeZone]', HOSTILE_NAMES, (n) => `where=${enc(JSON.stringify([{ type: 'today', attribute: 'releaseDate', timeZone: n }]))}`],
];

/** Driver or SQL text that must never reach a client. */
const LEAK = /SQLITE_|syntax error|relation "|no such (column|table)|invalid input syntax|\n\s+at /i;

describe.each(TEST_DBS)('hostile field names on %s', (kind) => {
  let t: TestApi;
  const snapshot = async () => {
    const knex = t.api.database.knex;
    const tables = ['product', 'brand', 'category'];
    const counts = await Promise.all(tables.map(async (table) => Number((await knex(table).count({ n: '*' }))[0].n)));
    const names = (await knex('product').select('name').orderBy('name')).map((r: { name: string }) => r.name);
    return { counts, names };
  };
  let before: Awaited<ReturnType<typeof snapshot>>;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    const brand = (await t.post('/api/Brand', { name: 'acme' }).expect(200)).body.id;
    await t.post('/api/Category', { name: 'tools', code: 'tools' }).expect(200);
    for (const name of ['alpha', 'beta', 'gamma']) await t.post('/api/Product', { name, brandId: brand }).expect(200);
    const gone = (await t.post('/api/Product', { name: 'deleted-one' }).expect(200)).body.id;
    await t.del(`/api/Product/${gone}`).expect(200);
    before = await snapshot();
    expect(before.counts).toEqual([4, 1, 1]);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    it.each(CHANNELS)('refuses every hostile name through %s with 400', async (_channel, names, query) => {
      expect(names.length).toBeGreaterThanOrEqual(10);
      for (const name of names) {
        const res = await t.get(`${base}/Product?${query(name)}`);
        const where = `${JSON.stringify(name.slice(0, 60))}: ${res.status} ${res.text.slice(0, 200)}`;
        expect([where, res.status]).toEqual([where, 400]);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body.error.code).toBe('CORE_INVALID_QUERY');
        expect(res.text).not.toMatch(LEAK);
        expect(res.headers['x-status-reason']).toMatch(/^[\x20-\x7e]+$/);
      }
      expect(await snapshot()).toEqual(before);
    });

    it('binds hostile values as values: they match nothing and change nothing', async () => {
      const values = ["x'; drop table product; --", "' or '1'='1", '%', "alpha' --", '") or 1=1 --', 'alpha\u2019'];
      for (const value of values) {
        for (const type of ['equals', 'startsWith', 'contains', 'in']) {
          const where = enc(JSON.stringify([{ type, attribute: 'name', value: type === 'in' ? [value] : value }]));
          const res = await t.get(`${base}/Product?where=${where}`);
          expect([value, type, res.status]).toEqual([value, type, 200]);
          expect(res.body).toEqual({ total: 0, list: [] });
        }
      }
      expect(await snapshot()).toEqual(before);
    });

    it('still lists the same records afterwards', async () => {
      const res = await t.get(`${base}/Product?select=name&sortBy=name`).expect(200);
      expect(res.body).toMatchObject({ total: 3, list: [{ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }] });
      expect(await snapshot()).toEqual(before);
    });
  });
});
