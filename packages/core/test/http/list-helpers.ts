import type { Response } from 'supertest';
import type { TestApi } from '../../../../test/support/api';

/** `where=<JSON>`, URL-encoded. */
export const jsonWhere = (items: unknown): string => `where=${encodeURIComponent(JSON.stringify(items))}`;

function serialize(prefix: string, value: unknown, out: string[]): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${prefix}=`);
    else if (value.every((v) => v === null || typeof v !== 'object')) {
      for (const v of value) out.push(`${prefix}[]=${encodeURIComponent(String(v))}`);
    } else value.forEach((v, i) => serialize(`${prefix}[${i}]`, v, out));
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) serialize(`${prefix}[${k}]`, v, out);
    return;
  }
  out.push(`${prefix}=${encodeURIComponent(String(value))}`);
}

/**
 * The bracket form a browser or PHP client sends: `where[0][type]=in&where[0][value][]=a`,
 * nested items through `where[0][value][0][type]=…`, an empty list as `where[0][value]=`.
 */
export function bracketWhere(items: unknown[]): string {
  const out: string[] = [];
  serialize('where', items, out);
  return out.join('&');
}

/** Driver or SQL text that must never reach a client. */
const LEAK = /SQLITE_|syntax error|relation "|column "|from "|no such (column|table)|invalid input syntax|\n\s+at /i;

/** A 400 `{error: {code, message}}` JSON answer with the reason header, and nothing of SQL in it. */
export function expectQueryError(res: Response, code = 'CORE_INVALID_QUERY'): void {
  if (res.status !== 400) throw new Error(`expected 400, got ${res.status}: ${JSON.stringify(res.body)}`);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.headers['x-status-reason']).toBeTruthy();
  expect(res.text).not.toMatch(LEAK);
}

/** GET a list and insist on 200; returns the body. */
export async function list(t: TestApi, path: string): Promise<{ total?: number; list?: Record<string, unknown>[] }> {
  const res = await t.get(path);
  if (res.status !== 200) throw new Error(`GET ${path} → ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Runs one `where` through both forms (bracket and JSON) and returns the sorted `name`s of the
 * matches; both forms must agree, and `total` must equal the number of records listed.
 */
export async function whereNames(t: TestApi, base: string, entity: string, items: unknown[]): Promise<string[]> {
  const results: string[][] = [];
  for (const where of [bracketWhere(items), jsonWhere(items)]) {
    const body = await list(t, `${base}/${entity}?maxSize=1000&select=name&${where}`);
    const names = (body.list ?? []).map((r) => String(r.name)).sort();
    expect(body.total).toBe(names.length);
    results.push(names);
  }
  expect(results[1]).toEqual(results[0]);
  return results[0];
}

/** Sends one `where` in both forms and expects a 400 query error from each. */
export async function expectWhereError(t: TestApi, base: string, entity: string, items: unknown[], code?: string): Promise<void> {
  for (const where of [bracketWhere(items), jsonWhere(items)]) {
    expectQueryError(await t.get(`${base}/${entity}?${where}`), code);
  }
}
