import qs from 'qs';
import { ApiError } from '../errors';
import type { FindParams } from '../records/repository';
import { MAX_WHERE_DEPTH } from '../util/where-limits';
import { nestsDeeper } from '../util/json-depth';

const bad = (message: string) => new ApiError('CORE_INVALID_QUERY', message);

/** Parameters a query string may hold; past it the request is refused, never cut short. */
export const MAX_QUERY_PARAMETERS = 5000;

/** `where[0][value][0][value]…[attribute]`: two levels (brackets, or JSON) per level of `and`, `or` and `not`. */
const WHERE_NESTING = 2 * MAX_WHERE_DEPTH + 4;
const tooDeep = () => bad(`where must not nest deeper than ${MAX_WHERE_DEPTH} levels`);

/**
 * 400 for a query string of more than `MAX_QUERY_PARAMETERS` parameters: a parser that kept only
 * the first ones would answer a list without the conditions at its end.
 */
export function assertQueryParameterCount(url: string): void {
  const at = url.indexOf('?');
  if (at < 0) return;
  if (url.slice(at + 1).split('&', MAX_QUERY_PARAMETERS + 1).length > MAX_QUERY_PARAMETERS) {
    throw bad(`The query string must not hold more than ${MAX_QUERY_PARAMETERS} parameters; send long lists in where as one JSON parameter`);
  }
}

/** Names the parser would drop to keep objects' prototypes intact: refused, never silently left out. */
const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype).concat('prototype'));

/**
 * A part of a query string decoded, or undefined when its percent escapes are not UTF-8 (`%FF`,
 * `%C3` alone). A `%` that starts no escape (`like` with `Prod%` sent unencoded) is itself, as the
 * parser reads it.
 */
function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replaceAll('+', ' ').replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
  } catch {
    return undefined;
  }
}

/**
 * 400 for a parameter the parser would misread or drop: a name or value whose percent escapes are
 * not UTF-8 (`%FF`, which the parser keeps as the literal text), text with a NUL
 * character (which no field, id or name holds, and PostgreSQL cannot compare), and a name, or a
 * bracket part of it, of `Object.prototype` (`where[0][__proto__]`).
 */
function assertReadableParameters(query: string): void {
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    const key = decoded(name);
    const value = eq < 0 ? '' : decoded(pair.slice(eq + 1));
    if (key === undefined || value === undefined) throw bad(`The query parameter ${key ?? name} has percent escapes that are not UTF-8`);
    if (key.includes('\u0000') || value.includes('\u0000')) throw bad(`The query parameter ${key.replaceAll('\u0000', '\\u0000')} must not contain the NUL character (\\u0000)`);
    const part = key.split(/[[\]]+/).find((p) => PROTOTYPE_KEYS.has(p));
    if (part !== undefined) throw bad(`The query parameter ${key} uses the name '${part}', which no parameter may use`);
  }
}

/**
 * 400 for a query string the parser would cut short, misread or drop a part of (see above): checked
 * for every request, also on routes that read no parameter, so that a query string is refused
 * alike wherever it is sent.
 */
export function assertReadableQuery(url: string): void {
  const at = url.indexOf('?');
  if (at < 0) return;
  assertQueryParameterCount(url);
  assertReadableParameters(url.slice(at + 1));
}

/**
 * Parses a raw query string with bracket notation (`where[0][type]=equals`), which Express 5's
 * default parser does not read.
 */
/** Each request's query string, parsed once (`queryOf`). */
const parsedQueries = new WeakMap<object, Record<string, unknown>>();

/**
 * A request's query string as `parseQueryString` reads it, parsed once per request: the router
 * parses it before any route (so that every route refuses a bad one), and the routes and the
 * plugins' `onRequest` hooks read that parse. Read it, never change it.
 */
export function queryOf(req: { originalUrl: string }): Record<string, unknown> {
  let query = parsedQueries.get(req);
  if (!query) parsedQueries.set(req, (query = parseQueryString(req.originalUrl)));
  return query;
}

export function parseQueryString(url: string): Record<string, unknown> {
  const at = url.indexOf('?');
  if (at < 0) return {};
  assertReadableQuery(url);
  try {
    return qs.parse(url.slice(at + 1), { depth: WHERE_NESTING, strictDepth: true, arrayLimit: 1000, parameterLimit: MAX_QUERY_PARAMETERS, allowPrototypes: false });
  } catch (error) {
    if (error instanceof RangeError) throw tooDeepParameter(url.slice(at + 1));
    throw error;
  }
}

/**
 * The refusal of a query string with a name nested in more brackets than the parser reads: said
 * of `where` as its nesting limit, of any other parameter (which nests nothing) by its name.
 */
function tooDeepParameter(query: string): ApiError {
  for (const pair of query.split('&')) {
    const name = decoded(pair.split('=', 1)[0] ?? '') ?? '';
    if ((name.match(/\[/g)?.length ?? 0) <= WHERE_NESTING) continue;
    if (name.startsWith('where[')) return tooDeep();
    return bad(`The query parameter ${name.slice(0, name.indexOf('['))} must not nest brackets deeper than ${WHERE_NESTING} levels`);
  }
  return tooDeep();
}

function bool(value: unknown, name: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw bad(`${name} must be true or false`);
}

function int(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) throw bad(`${name} must be an integer`);
  const n = Number(value);
  if (n < 0) throw bad(`${name} must not be negative`);
  if (!Number.isSafeInteger(n)) throw bad(`${name} is too large`);
  return n;
}

function list(value: unknown, name: string): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  const parts = Array.isArray(value) ? value : [value];
  if (!parts.every((p) => typeof p === 'string')) throw bad(`${name} must be a comma-separated list`);
  return (parts as string[]).flatMap((p) => p.split(',')).map((p) => p.trim()).filter(Boolean);
}

/** Objects with numeric keys (qs past its array limit) become arrays, recursively. */
function normalizeWhere(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeWhere);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > 0 && entries.every(([k]) => /^\d+$/.test(k))) {
      return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => normalizeWhere(v));
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, normalizeWhere(v)]));
  }
  return value;
}

/** `where` in bracket form or as a JSON string; a single item object is accepted as a list of one. */
export function parseWhere(value: unknown): unknown[] | undefined {
  if (value === undefined || value === '') return undefined;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw bad('where must be a list of conditions (bracket form or JSON)');
    }
    // Checked before anything walks it recursively (a value nested thousands deep overflowed the stack).
    if (nestsDeeper(parsed, WHERE_NESTING)) throw tooDeep();
  }
  parsed = normalizeWhere(parsed);
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) parsed = [parsed];
  if (!Array.isArray(parsed)) throw bad('where must be a list of conditions');
  return parsed;
}

/** The list parameters of the spec and CONTRACT.md §5. Unknown parameters are ignored. */
export function parseListParams(query: Record<string, unknown>): FindParams {
  const params: FindParams = {
    select: list(query.select, 'select'),
    where: parseWhere(query.where),
    offset: int(query.offset, 'offset'),
    maxSize: int(query.maxSize, 'maxSize'),
    sortBy: typeof (query.sortBy ?? query.orderBy) === 'string' ? ((query.sortBy ?? query.orderBy) as string) : undefined,
    asc: bool(query.asc, 'asc'),
    totalOnly: bool(query.totalOnly, 'totalOnly'),
    collectionOnly: bool(query.collectionOnly, 'collectionOnly'),
    attributes: list(query.attributes, 'attributes'),
    allAttributes: bool(query.allAttributes, 'allAttributes'),
  };
  // `orderBy` and `order` (AtroCore's names) are read as `sortBy` and `asc`: refused alike when
  // malformed, never ignored (the list would come in another order than asked).
  if (query.sortBy !== undefined && typeof query.sortBy !== 'string') throw bad('sortBy must be a field name');
  if (query.orderBy !== undefined && typeof query.orderBy !== 'string') throw bad('orderBy must be a field name');
  if (query.order !== undefined && query.order !== 'asc' && query.order !== 'desc') throw bad('order must be asc or desc');
  if (params.totalOnly && params.collectionOnly) throw bad('totalOnly and collectionOnly cannot both be true');
  if (params.asc === undefined && query.order !== undefined) params.asc = query.order === 'asc';
  return params;
}
