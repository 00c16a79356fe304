/**
 * The simple mode of list.ts (`--schema simple`): the schema of simple-entities.ts, its seed,
 * and the six requests the issue measures against a floor written from what the answers need.
 */
import { SCENARIOS as PIM_SCENARIOS, type Scenario } from './list-scenarios';
import type { BenchDatabase, Seeded } from './support';

const br = (s: string) => s.replace(/\[/g, '%5B').replace(/\]/g, '%5D');
const runId = Date.now().toString(36);
/** A scenario of the PIM mode, by key. */
function writeScenario(key: 'create' | 'update'): Scenario {
  const scenario = PIM_SCENARIOS.find((s) => s.key === key);
  if (!scenario) throw new Error(`no ${key} scenario`);
  return scenario;
}
/** Records per request of the batch scenario. */
const BATCH = 1000;

const ADJECTIVES = ['Compact', 'Deluxe', 'Rugged', 'Smart', 'Classic', 'Silent', 'Pro', 'Eco', 'Mini', 'Ultra'];
// Four of the twenty contain "ab" (one in capitals): a quarter of the names.
const NOUNS = ['Cable', 'Table', 'Lamp', 'Chair', 'Drill', 'Kettle', 'Monitor', 'Router', 'Speaker', 'Tablet', 'Label Printer', 'Backpack', 'Desk', 'Fan', 'Heater', 'Mixer', 'Scanner', 'Camera', 'Charger', 'ABS Case'];

/**
 * 100 brands and `products` products in two set-based statements (not measured). Names are an
 * adjective, a noun and the number (a quarter contain "ab", in either case); prices a
 * permutation of 0.00 … 999.99, so that filters and sorts are deterministic.
 */
export async function seedSimple(db: BenchDatabase, products: number): Promise<Seeded> {
  return db.withClient(async (c) => {
    const admin = (await c.query('select id from "user" where user_name = $1', ['admin'])).rows[0].id as string;
    const at = new Date().toISOString().slice(0, 19).replace('T', ' ');
    await c.query(
      `insert into brand (id, name, created_at, modified_at, created_by_id, modified_by_id, deleted)
       select gen_random_uuid()::text, 'Brand ' || lpad(i::text, 3, '0'), $1, $1, $2, $2, false from generate_series(1, 100) i`,
      [at, admin],
    );
    await c.query(
      `insert into product (id, name, sku, price, quantity, is_active, brand_id, description, created_at, modified_at, created_by_id, modified_by_id, deleted)
       select gen_random_uuid()::text, ($4::text[])[1 + i % 10] || ' ' || ($5::text[])[1 + (i / 10) % 20] || ' ' || i,
              'SKU-' || lpad(i::text, 7, '0'), ((i::bigint * 7919) % 100000) / 100.0, (i * 31) % 500, i % 10 <> 0, b.id,
              'Product number ' || i || ' of the simple bench.', $1, $1, $2, $2, false
       from generate_series(1, $3::int) i
       join (select id, (row_number() over (order by name)) - 1 as n from brand) b on b.n = i % 100`,
      [at, admin, products, ADJECTIVES, NOUNS],
    );
    await c.query('vacuum analyze');
    const productIds = (await c.query('select id from product order by id')).rows.map((r) => r.id as string);
    const brandIds = (await c.query('select id from brand order by name')).rows.map((r) => r.id as string);
    return { productIds, brandIds };
  });
}

/**
 * 1,000 new Products through `POST /api/upsert`. Ours logs a change of each (CONTRACT §16); the
 * floor does under `batchLogged` (asked by `?changes=logged`, which only the floor reads).
 */
function batchScenario(key: 'batch' | 'batchLogged', title: string): Scenario {
  return {
    key,
    title,
    goal: 0.8,
    perRequest: BATCH,
    varying: ['id', 'sku', 'createdAt', 'modifiedAt'],
    request: (i, t, d) => ({
      method: 'POST',
      path: t === 'floor' && key === 'batchLogged' ? '/api/upsert?changes=logged' : '/api/upsert',
      body: JSON.stringify(
        Array.from({ length: BATCH }, (_, k) => ({
          entity: 'Product',
          payload: { name: `Batch product ${k}`, sku: `batch-${runId}-${key}-${t}-${i}-${k}`, price: (k % 1000) + 0.25, quantity: k % 50, brandId: d.brandIds[k % d.brandIds.length] },
        })),
      ),
    }),
  };
}

/**
 * A single write of the PIM mode whose floor also logs its change (`?changes=logged`, which only
 * the floor reads): ours logs every change (CONTRACT §16), the floor of the issue does not.
 */
function loggedWrite(key: 'create' | 'update', title: string): Scenario {
  const write = writeScenario(key);
  return {
    ...write,
    key: `${key}Logged`,
    title,
    request: (i, t, d) => {
      const r = write.request(i, t, d);
      // Skus of their own: the create scenario stored those of the same numbers.
      const body = key === 'create' && r.body ? JSON.stringify({ ...JSON.parse(r.body), sku: `logged-${runId}-${t}-${i}` }) : r.body;
      return { ...r, body, path: t === 'floor' ? `${r.path}?changes=logged` : r.path };
    },
  };
}

/** The scenarios of the issue, in its order; goals from DESIGN.md ("Performance"). */
export const SIMPLE_SCENARIOS: Scenario[] = [
  {
    key: 'filter',
    title: 'list: price > 500, name contains "ab", sort by price, with total, 100 rows',
    goal: 0.9,
    request: () => ({
      method: 'GET',
      path: br('/api/Product?where[0][type]=greaterThan&where[0][attribute]=price&where[0][value]=500&where[1][type]=contains&where[1][attribute]=name&where[1][value]=ab&sortBy=price&asc=true&maxSize=100'),
    }),
  },
  {
    key: 'get',
    title: 'get one record by id',
    goal: 0.6,
    request: (i, _t, d) => ({ method: 'GET', path: `/api/Product/${d.productIds[(i * 7919) % d.productIds.length]}` }),
  },
  // The same single writes as the PIM mode (list-scenarios.ts).
  writeScenario('create'),
  { ...writeScenario('update'), title: 'update one field' },
  loggedWrite('create', 'create one, the floor logging its change too'),
  loggedWrite('update', 'update one field, the floor logging its change too'),
  batchScenario('batch', `${BATCH.toLocaleString('en-US')} new records in one request`),
  // The same request; the floor also logs a change of each record, in the same statement.
  batchScenario('batchLogged', `${BATCH.toLocaleString('en-US')} new records in one request, the floor logging changes too`),
  {
    key: 'list',
    title: 'list 100 rows, every field and the brand name',
    goal: 0.7,
    request: () => ({ method: 'GET', path: '/api/Product?maxSize=100&collectionOnly=true' }),
  },
];
