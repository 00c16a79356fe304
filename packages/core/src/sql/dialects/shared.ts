import { ApiError } from '../../errors';
import type { ErrorContext } from './dialect';

export function uniqueViolation(context: ErrorContext, key: string, cause: unknown): ApiError {
  const fields = context.uniqueFields?.(key) ?? [];
  const entity = context.entity ?? 'record';
  const message = fields.length
    ? `${entity} with the same ${fields.join(', ')} already exists`
    : `${entity} already exists`;
  return new ApiError('CORE_UNIQUE_VIOLATION', message, { details: { entity, fields }, cause });
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/** Lost or refused connections and pool time-outs: the database is unavailable, not broken. */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  if (code && CONNECTION_CODES.has(code)) return true;
  if (error.name === 'KnexTimeoutError') return true;
  return /Connection terminated|connection (?:was )?closed|Client has encountered a connection error/i.test(
    error.message,
  );
}

export const databaseUnavailable = (cause: unknown): ApiError =>
  new ApiError('CORE_DATABASE_UNAVAILABLE', 'The database is unavailable; try again shortly', { cause });

export function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}
