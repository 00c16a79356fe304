import type { FieldModel } from '../definition/normalize';
import { ApiError } from '../errors';
import { INT_MAX, INT_MIN } from '../definition/validate-record';
import { isValidDate, normalizeDateTime } from '../time';

/** Longest text a filter value may have. */
const MAX_TEXT = 10_000;
/** Largest day count of `lastXDays` / `nextXDays` (about 270 years), so that dates stay in range. */
export const MAX_DAYS = 100_000;
/** A decimal number as text: `12`, `-3.5`, `1e3`; no hex, no blanks, no `Infinity`. */
const NUMBER_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export const invalidQuery = (message: string, details?: Record<string, unknown>): ApiError =>
  new ApiError('CORE_INVALID_QUERY', message, { details });

/**
 * Turns a filter value (a string from the query string, or a JSON value) into the value of the
 * field's type, or throws 400. Nothing reaches SQL that the column could reject.
 */
export function coerceScalar(field: FieldModel, value: unknown): string | number | boolean {
  const bad = (): never => {
    throw invalidQuery(`Value ${JSON.stringify(value)} does not fit field '${field.name}' (${field.type})`, {
      field: field.name,
    });
  };
  switch (field.type) {
    case 'int':
    case 'float': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && NUMBER_RE.test(value) ? Number(value) : NaN;
      if (!Number.isFinite(n) || (field.type === 'int' && !Number.isInteger(n))) bad();
      if (field.type === 'int' && (n < INT_MIN || n > INT_MAX)) bad();
      return n;
    }
    case 'bool':
      if (value === true || value === 'true' || value === '1' || value === 1) return true;
      if (value === false || value === 'false' || value === '0' || value === 0) return false;
      return bad();
    case 'date':
      if (typeof value !== 'string' || !isValidDate(value)) bad();
      return value as string;
    case 'datetime': {
      if (typeof value !== 'string') bad();
      const normalized = isValidDate(value as string) ? `${value} 00:00:00` : normalizeDateTime(value as string);
      return normalized ?? bad();
    }
    default:
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      if (!isFilterText(value)) bad();
      return value as string;
  }
}

/**
 * Text a filter may bind: a string of at most 10,000 characters without NUL (PostgreSQL refuses
 * NUL in text, so such a value could never match and would fail in the driver).
 */
export function isFilterText(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_TEXT && !value.includes('\u0000');
}

/** A list value: an array, or a comma-free single value. */
export function asList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === undefined || value === null || value === '') return [];
  if (typeof value === 'object') return Object.values(value as object);
  return [value];
}

/** The operators that hold other where items: `and`, `or` and `not`. */
export const WHERE_GROUPS: ReadonlySet<string> = new Set(['and', 'or', 'not']);

/** Whether a where item is a group (`and`, `or`, `not`) whose value holds further items. */
export function isWhereGroup(item: unknown): boolean {
  return typeof item === 'object' && item !== null && WHERE_GROUPS.has((item as { type?: unknown }).type as string);
}

/**
 * The items a group's value holds: a list, or a single item object (`where[0][value][type]=…`)
 * as a list of one. The compiler and the depth limit read a group the same way, so that no form
 * of nesting escapes the limit.
 */
export function groupItems(value: unknown): unknown[] {
  const single = value !== null && typeof value === 'object' && !Array.isArray(value) && 'type' in value;
  return single ? [value] : asList(value);
}

export function asNonNegativeInt(value: unknown, what: string, max?: number): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw invalidQuery(`${what} must be a non-negative integer`);
  if (max !== undefined && n > max) throw invalidQuery(`${what} must not exceed ${max}`);
  return n;
}

export const escapeLike = (value: string): string => value.replace(/[\\%_]/g, '\\$&');

/**
 * A client's own `like` pattern (`%` and `_` wildcards, `\` escapes the next character). A
 * trailing lone `\` stands for itself: PostgreSQL would refuse the pattern, SQLite match nothing.
 */
export function likePattern(value: string): string {
  const trailing = /\\+$/.exec(value)?.[0].length ?? 0;
  return trailing % 2 === 1 ? `${value}\\` : value;
}
