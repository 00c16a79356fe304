import type { FieldModel } from '../definition/normalize';
import { ApiError } from '../errors';
import { isValidDate, normalizeDateTime } from '../time';

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
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (!Number.isFinite(n) || (field.type === 'int' && !Number.isInteger(n))) bad();
      if (field.type === 'int' && Math.abs(n) > 2 ** 31 - 1) bad();
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
      if (typeof value !== 'string') bad();
      if ((value as string).length > 10_000) bad();
      return value as string;
  }
}

/** A list value: an array, or a comma-free single value. */
export function asList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === undefined || value === null || value === '') return [];
  if (typeof value === 'object') return Object.values(value as object);
  return [value];
}

export function asNonNegativeInt(value: unknown, what: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw invalidQuery(`${what} must be a non-negative integer`);
  return n;
}

export const escapeLike = (value: string): string => value.replace(/[\\%_]/g, '\\$&');
