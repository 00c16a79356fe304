/** The requests list.ts sends to both servers of the PIM example, and the check that both answer alike. */
import type { CapturedQuery } from './child-ipc';
import { AUTH_SQL, type Seeded, type ServerChild } from './support';

export type Target = 'ours' | 'floor';
export interface Req {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: string;
}
export interface Scenario {
  key: string;
  title: string;
  /** Least ratio of our req/s to the floor's (DESIGN.md), if the scenario has one. */
  goal?: number;
  /**
   * Keys of the answer that may differ between the servers, which write different records or
   * values at different moments; the SQL bindings are then compared by count. None: same JSON.
   */
  varying?: string[];
  /** Records one request writes (the table shows records/s); 1 when absent. */
  perRequest?: number;
  request(i: number, target: Target, data: Seeded): Req;
}

const br = (s: string) => s.replace(/\[/g, '%5B').replace(/\]/g, '%5D');
const THRESHOLDS = [100, 300, 500, 700, 900];
/** The simple fields of the plain list; the list with links selects them too. */
export const PLAIN_FIELDS = 'name,sku,price';
/** Issue goal: the page with brand and categories names takes at most this many times the plain page's time. */
export const LINKS_GOAL = 1.5;
const runId = Date.now().toString(36);

export const SCENARIOS: Scenario[] = [
  {
    key: 'get',
    title: 'get one record by id',
    goal: 0.5,
    request: (i, _t, d) => ({ method: 'GET', path: `/api/Product/${d.productIds[(i * 7919) % d.productIds.length]}` }),
  },
  {
    key: 'filter',
    title: 'list: filter + sort + count, 100 rows',
    goal: 0.8,
    request: (i) => ({
      method: 'GET',
      path: br(`/api/Product?where[0][type]=greaterThan&where[0][attribute]=price&where[0][value]=${THRESHOLDS[i % THRESHOLDS.length]}&sortBy=price&asc=true&maxSize=100`),
    }),
  },
  {
    key: 'brand',
    title: 'list 100 rows with the brand name',
    goal: 0.6,
    request: () => ({ method: 'GET', path: '/api/Product?select=name,sku,price,brandName&maxSize=100&collectionOnly=true' }),
  },
  {
    key: 'plain',
    title: 'plain list, 100 rows',
    request: () => ({ method: 'GET', path: `/api/Product?select=${PLAIN_FIELDS}&maxSize=100&collectionOnly=true` }),
  },
  {
    key: 'links',
    title: 'list 100 rows with brand and categories names',
    request: () => ({ method: 'GET', path: `/api/Product?select=${PLAIN_FIELDS},brandName,categoriesNames&maxSize=100&collectionOnly=true` }),
  },
  {
    key: 'create',
    title: 'create one',
    goal: 0.5,
    varying: ['id', 'sku', 'createdAt', 'modifiedAt'],
    request: (i, t, d) => ({
      method: 'POST',
      path: '/api/Product',
      body: JSON.stringify({ name: `Bench product ${i}`, sku: `bench-${runId}-${t}-${i}`, price: (i % 1000) + 0.5, quantity: i % 50, brandId: d.brandIds[i % d.brandIds.length] }),
    }),
  },
  {
    key: 'update',
    title: 'update one',
    goal: 0.5,
    varying: ['price', 'modifiedAt'],
    // Both servers update the same products in turn, and every request must change the price (an
    // unchanged record is answered without an update): a new number each time, with a fraction of
    // each server's own that is not whole cents as the seeded prices are.
    request: (i, t, d) => ({
      method: 'PATCH',
      path: `/api/Product/${d.productIds[(i * 7919) % d.productIds.length]}`,
      body: JSON.stringify({ price: i + (t === 'ours' ? 0.125 : 0.375) }),
    }),
  },
];

export async function login(server: ServerChild, password: string): Promise<string> {
  const res = await fetch(`${server.url}/api/userSession`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`, 'authorization-token-only': 'true' },
  });
  if (!res.ok) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { authorizationToken: string }).authorizationToken;
}

async function send(server: ServerChild, token: string, req: Req): Promise<{ status: number; body: unknown }> {
  const res = await fetch(server.url + req.path, {
    method: req.method,
    headers: { 'authorization-token': token, ...(req.body && { 'content-type': 'application/json' }) },
    body: req.body,
  });
  return { status: res.status, body: await res.json() };
}


export interface Verdict {
  problems: string[];
  /** Statements our server sends beyond the floor's (redundant work, counted against ours). */
  extra: string[];
  /** The statements each server sent (the token check left out). */
  sql: Record<Target, CapturedQuery[]>;
}

/** The answer with the values of `varying` keys, at any depth, replaced by their type. */
function masked(value: unknown, varying: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => masked(v, varying));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, varying.includes(k) ? typeof v : masked(v, varying)]));
}

/**
 * Before measuring: the JSON must be the same (but for the `varying` keys). With `sameSql` (the
 * PIM mode, whose floor copies our SQL), every statement of the floor must also appear, in order
 * and with the same bindings, among ours; statements only ours sends are allowed but reported:
 * the floor does the work the answer needs, not our redundant work.
 */
export async function verify(s: Scenario, servers: Record<Target, ServerChild>, request: { token: string; data: Seeded; sameSql: boolean }): Promise<Verdict> {
  const seen = {} as Record<Target, { status: number; body: unknown; queries: CapturedQuery[] }>;
  for (const t of ['ours', 'floor'] as Target[]) {
    const { result, queries } = await servers[t].capture(() => send(servers[t], request.token, s.request(0, t, request.data)));
    seen[t] = { ...result, queries: queries.filter((q) => !AUTH_SQL.test(q.sql)) };
  }
  const problems: string[] = [];
  const { ours, floor } = seen;
  if (ours.status !== 200 || floor.status !== 200) problems.push(`status ours ${ours.status}, floor ${floor.status}: ${JSON.stringify(ours.body).slice(0, 300)} / ${JSON.stringify(floor.body).slice(0, 300)}`);
  const extra = request.sameSql ? sameSqlProblems(s, ours.queries, floor.queries, problems) : [];
  const comparable = (body: unknown) => JSON.stringify(masked(body, s.varying ?? []));
  if (comparable(ours.body) !== comparable(floor.body)) {
    problems.push(`JSON differs:\n  ours:  ${comparable(ours.body).slice(0, 400)}\n  floor: ${comparable(floor.body).slice(0, 400)}`);
  }
  return { problems, extra, sql: { ours: ours.queries, floor: floor.queries } };
}

/** Adds to `problems` each statement of the floor that ours does not send in order; answers ours' other statements. */
function sameSqlProblems(s: Scenario, ours: CapturedQuery[], floor: CapturedQuery[], problems: string[]): string[] {
  const bindings = (q: CapturedQuery) => JSON.stringify(s.varying ? q.bindings.length : q.bindings);
  const extra: string[] = [];
  let f = 0;
  for (const q of ours) {
    const want = floor[f];
    if (want && want.sql === q.sql) {
      if (bindings(want) !== bindings(q)) problems.push(`bindings differ for ${q.sql.slice(0, 80)}…: ours ${bindings(q)}, floor ${bindings(want)}`);
      f += 1;
    } else extra.push(q.sql);
  }
  if (f < floor.length) {
    const list = (q: CapturedQuery[]) => q.map((x) => x.sql).join('\n         ');
    problems.push(`the floor sends SQL ours does not:\n  ours:  ${list(ours)}\n  floor: ${list(floor)}`);
  }
  return extra;
}
