import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createTestDatabase, TEST_DBS, type TestDatabase } from '../../../test/support/databases';
import { createPim, type Pim } from '../src/app';
import { readConfig } from '../src/config';

/**
 * Odd values sent as a hostile client would, through every write route and every list filter of
 * the example (CONTRACT §2, §17): no answer is a 5xx or other than JSON, every refusal is the API's
 * error (its code, its message, the same text in `X-Status-Reason`, as ASCII), and a write that is refused,
 * or whose upsert items all fail, changes nothing (no change is logged: every change of a record
 * is, in its transaction; CONTRACT §16).
 */
jest.setTimeout(180_000);
const PASSWORD = 'pim-odd-values-password';

const VALUES: unknown[] = [
  null, true, 0, -1, 1e308, 1.5, 2 ** 53 + 2, '', ' ', 'x', 'x'.repeat(5000), '\u0000', 'é', '9999-12-31', '2026-13-45',
  [], [null], ['x'], [[]], {}, { id: 'nope' }, { name: 'odd' }, { name: null },
];
const FIELDS = [
  'name', 'sku', 'mpn', 'description', 'price', 'quantity', 'isActive', 'releaseDate', 'brandId', 'brand', 'categoriesIds', 'categories',
  'statusId', 'status', 'tagsIds', 'mainImageId', 'mainImage', 'nameDeDE', 'id', 'createdAt', 'createdById', 'deleted', 'brandName', 'unknownField', '__proto__',
];
const OPERATORS = ['equals', 'notIn', 'like', 'contains', 'greaterThan', 'between', 'isNull', 'isTrue', 'lastXDays', 'linkedWith', 'arrayAnyOf', 'or', 'not'];
const QUERY_VALUES = ['', 'x', '-1', '1e400', '%', '2026-01-01'];

describe.each(TEST_DBS)('odd values through every route of the example on %s', (kind) => {
  let db: TestDatabase;
  let pim: Pim;
  let server: http.Server;
  let storage: string;
  let token: string;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'er-pim-odd-'));
    const config = readConfig({ LOG_LEVEL: 'silent' });
    pim = await createPim({ ...config, databaseUrl: db.url, storageDir: storage, adminPassword: PASSWORD, demoData: false });
    server = http.createServer(pim.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    token = (await request(server).get('/api/userSession').auth('admin', PASSWORD).set('Authorization-Token-Only', 'true').expect(200)).body.authorizationToken;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await pim?.api.close();
    await db?.drop();
    fs.rmSync(storage, { recursive: true, force: true });
  });

  /** The last change logged: it moves with every write that changes anything. */
  const lastChange = async () => Number((await pim.api.database.knex('record_change').max({ seq: 'seq' }).first())?.seq ?? 0);

  /** What is wrong with one answer, if anything (`refused`: whether it stored nothing by its own account). */
  function problemOf(res: request.Response, { refused }: { refused: boolean }): string | undefined {
    if (res.status >= 500) return `answered ${res.status}: ${res.text.slice(0, 200)}`;
    if (!/^application\/json/.test(res.headers['content-type'] ?? '')) return `answered ${res.status} as ${res.headers['content-type']}`;
    if (!refused || res.status < 400) return undefined;
    const { code, message } = res.body?.error ?? {};
    if (typeof code !== 'string' || typeof message !== 'string') return `answered ${res.status} without the API's error: ${res.text.slice(0, 200)}`;
    // The header holds printable ASCII only: other characters of the message go as `?`, at most 500 of them.
    const reason = message.replace(/[^\x20-\x7e]/g, '?').slice(0, 500);
    if (res.headers['x-status-reason'] !== reason) return `X-Status-Reason '${res.headers['x-status-reason']}' is not the message '${message}'`;
    return undefined;
  }

  it('never answers 5xx nor stores a write it refuses, whatever a write route is sent', async () => {
    const call = (method: 'post' | 'patch' | 'put', url: string, body: unknown, headers: Record<string, string> = {}) =>
      request(server)[method](url).set('Authorization-Token', token).set(headers).send(JSON.stringify(body)).type('json');
    const brand = (await call('post', '/api/Brand', { name: 'Odd brand' }).expect(200)).body;
    const product = (await call('post', '/api/Product', { name: 'Odd product', sku: 'odd-1', brandId: brand.id }).expect(200)).body;
    // Both writes were logged: the check below sees every change.
    expect(await lastChange()).toBeGreaterThan(0);
    /** A write route: its request for one odd body, and whether the answer says that it stored nothing. */
    const routes: { name: string; send: (field: string, value: unknown) => request.Test; refused: (res: request.Response) => boolean }[] = [
      { name: 'create', send: (f, v) => call('post', '/api/Product', { name: 'Odd', [f]: v }), refused: (res) => res.status >= 400 },
      { name: 'PATCH', send: (f, v) => call('patch', `/api/Product/${product.id}`, { [f]: v }), refused: (res) => res.status >= 400 },
      { name: 'PUT, flattened', send: (f, v) => call('put', `/api/v1/Product/${product.id}`, { [f]: v }, { 'Flatten-Attributes': 'true' }), refused: (res) => res.status >= 400 },
      {
        name: 'upsert',
        send: (f, v) => call('post', '/api/v1/MassActions/action/upsert', [{ entity: 'Product', payload: { sku: 'odd-1', [f]: v } }]),
        refused: (res) => res.status >= 400 || (Array.isArray(res.body) && res.body.every((item: { status: string }) => item.status === 'Failed')),
      },
      {
        name: 'mass update',
        send: (f, v) => call('post', '/api/entityMassUpdate', { entityName: 'Product', ids: [product.id], values: { [f]: v } }),
        refused: (res) => res.status >= 400 || res.body?.updated === 0,
      },
      { name: 'link route', send: (_f, v) => call('post', `/api/Product/${product.id}/categories`, { ids: v }), refused: (res) => res.status >= 400 },
      { name: 'attribute values', send: (_f, v) => call('post', `/api/Product/${product.id}/upsertAttributeValues`, [{ attributeId: v, value: v }]), refused: (res) => res.status >= 400 },
    ];
    const problems: string[] = [];
    for (const route of routes) {
      for (const field of route.name === 'link route' || route.name === 'attribute values' ? ['-'] : FIELDS) {
        for (const value of VALUES) {
          const before = await lastChange();
          const res = await route.send(field, value);
          const refused = route.refused(res);
          const problem = problemOf(res, { refused }) ?? (refused && (await lastChange()) !== before ? 'refused, but logged a change' : undefined);
          if (problem) problems.push(`${route.name} ${field}=${JSON.stringify(value)?.slice(0, 40)}: ${problem}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('never answers 5xx to a list, a read or linked records, whatever their query and headers say', async () => {
    const get = (url: string, headers: Record<string, string> = {}) => request(server).get(url).set('Authorization-Token', token).set(headers);
    const problems: string[] = [];
    const check = async (url: string, headers?: Record<string, string>) => {
      const problem = problemOf(await get(url, headers), { refused: true });
      if (problem) problems.push(`${url.slice(0, 160)}: ${problem}`);
    };
    for (const field of FIELDS) {
      for (const type of OPERATORS) {
        for (const value of QUERY_VALUES) {
          const one = new URLSearchParams({ 'where[0][type]': type, 'where[0][attribute]': field, 'where[0][value]': value });
          await check(`/api/Product?${one}`);
          const list = new URLSearchParams({ 'where[0][type]': type, 'where[0][attribute]': field, 'where[0][value][]': value, 'where[0][timeZone]': value });
          await check(`/api/v1/Product?${list}`);
        }
      }
      for (const value of QUERY_VALUES) {
        const e = encodeURIComponent;
        await check(`/api/Product?sortBy=${e(field)}&asc=${e(value)}&select=${e(field)}&maxSize=${e(value)}&offset=${e(value)}`);
        await check(`/api/Product/${e(value || 'x')}?select=${e(field)}`, { language: value, 'With-Meta': value, 'Flatten-Attributes': value });
        await check(`/api/entityRelation?entityName=Product&id=${e(value)}&link=${e(field)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
