import knex from 'knex';
import { randomBytes } from 'node:crypto';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../../test/support/databases';
import { attributeEntities, createAttribute, FLAT, LANGUAGES } from '../attributes/support';

const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A PostgreSQL database whose own locale orders text alphabetically (ICU `en-US`: "apple" before
 * "Banana"), as databases made with a language locale do; SQLite: a fresh database.
 */
async function localeDatabase(kind: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  if (kind === 'sqlite') return createTestDatabase(kind);
  const name = `er_test_${randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const admin = knex({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
    try {
      await admin.raw(statement);
    } finally {
      await admin.destroy();
    }
  };
  await run(`create database "${name}" template template0 locale_provider icu icu_locale 'en-US'`);
  return { kind, url: PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`), drop: () => run(`drop database if exists "${name}" with (force)`) };
}

const where = (items: unknown[]) => `where=${encodeURIComponent(JSON.stringify(items))}`;

/** Text in code point order, as JavaScript sorts it: upper case before lower case, "_" between them, "Ä" after "z". */
const NAMES = ['apple', 'Banana', 'a-b', 'ab', 'Äpfel', 'Zeta', 'zulu', '_x'];
const inOrder = [...NAMES].sort();

describe.each(TEST_DBS)('text sorts and compares in code point order on %s, whatever the database locale', (kind) => {
  let db: TestDatabase;
  let t: TestApi;
  beforeAll(async () => {
    db = await localeDatabase(kind);
    t = await startTestApi(kind, { entities: attributeEntities, languages: LANGUAGES }, db);
    await createAttribute(t, { code: 'label', type: 'varchar' });
    for (const name of NAMES) {
      const brandId = (await t.post('/api/Brand', { name }).expect(200)).body.id;
      await t.post('/api/Product', { name, mpn: name, brandId, label: name }).set(FLAT).expect(200);
    }
  });
  afterAll(async () => {
    await t.close();
    await db.drop();
  });

  const names = async (path: string) => ((await t.get(path).expect(200)).body.list as { name: string }[]).map((r) => r.name);

  it.each(GENERATIONS)('sortBy a text field, a link (by its name) and a text attribute (generation %s)', async (_g, base) => {
    expect(await names(`${base}/Product?select=name&sortBy=name`)).toEqual(inOrder);
    expect(await names(`${base}/Product?select=name&sortBy=name&asc=false`)).toEqual([...inOrder].reverse());
    expect(await names(`${base}/Brand?select=name&sortBy=name`)).toEqual(inOrder);
    expect(await names(`${base}/Product?select=name&sortBy=brandName`)).toEqual(inOrder);
    expect(await names(`${base}/Product?select=name&sortBy=brand&asc=false`)).toEqual([...inOrder].reverse());
    expect(await names(`${base}/Product?select=name&attributes=label&sortBy=label`)).toEqual(inOrder);
    // A page of a filtered list (the page and its total in one statement) keeps the order too.
    const filtered = `${base}/Product?select=name&sortBy=mpn&maxSize=3&offset=2&${where([{ type: 'isNotNull', attribute: 'mpn' }])}`;
    expect(await names(filtered)).toEqual(inOrder.slice(2, 5));
  });

  it.each(GENERATIONS)('greaterThan, lessThan and between compare text as it sorts (generation %s)', async (_g, base) => {
    const matching = async (items: unknown[]) => names(`${base}/Product?select=name&sortBy=name&${where(items)}`);
    expect(await matching([{ type: 'greaterThan', attribute: 'name', value: 'a' }])).toEqual(inOrder.filter((n) => n > 'a'));
    expect(await matching([{ type: 'lessThanOrEquals', attribute: 'mpn', value: 'ab' }])).toEqual(inOrder.filter((n) => n <= 'ab'));
    expect(await matching([{ type: 'between', attribute: 'name', value: ['Zeta', 'ab'] }])).toEqual(inOrder.filter((n) => n >= 'Zeta' && n <= 'ab'));
    expect(await matching([{ type: 'lessThan', attribute: 'label', value: 'a', isAttribute: true }])).toEqual(inOrder.filter((n) => n < 'a'));
  });
});
