import type { FieldType } from '../../declarations';
import { ApiError } from '../../errors';
import type { ErrorContext } from './dialect';

/** A quoted SQL identifier. */
export const quoteName = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * 409 for a unique key taken: the entity and fields of the index that collided, of the table the
 * driver names (`table`) when that is another entity's than the context's own.
 */
export function uniqueViolation(context: ErrorContext, { key, table }: { key: string; table?: string }, cause: unknown): ApiError {
  const of = (table !== undefined && context.ofTable?.(table)) || context;
  const fields = of.uniqueFields?.(key) ?? [];
  const entity = of.entity ?? 'record';
  const message = fields.length
    ? `${entity} with the same ${fields.join(', ')} already exists`
    : `${entity} already exists`;
  return new ApiError('CORE_UNIQUE_VIOLATION', message, { details: { entity, fields }, cause });
}

/** The column type of a field where both databases name it alike (text unless said otherwise). */
export function commonColumnType(type: FieldType, maxLength?: number): string {
  switch (type) {
    case 'int':
      return 'integer';
    case 'bool':
      return 'boolean';
    case 'varchar':
    case 'enum':
      return `varchar(${maxLength ?? 255})`;
    case 'link':
      return 'varchar(64)';
    default:
      return 'text';
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/** Lost or refused connections and pool time-outs: the database is unavailable, not broken. */
export function isConnectionError(error: unknown): boolean {
  // Duck-typed: errors made by Node's own modules may come from another realm than `Error`.
  if (typeof error !== 'object' || error === null) return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  if (name === 'KnexTimeoutError') return true;
  return (
    typeof message === 'string' &&
    /Connection terminated|connection (?:was )?closed|Client has encountered a connection error|Connection ended unexpectedly/i.test(message)
  );
}

export const databaseUnavailable = (cause: unknown): ApiError =>
  new ApiError('CORE_DATABASE_UNAVAILABLE', 'The database is unavailable; try again shortly', { cause });

/** A statement the database cancelled because it ran past the statement timeout. */
export const statementTimedOut = (cause: unknown): ApiError =>
  new ApiError('CORE_TIMEOUT', 'The database took too long to answer; try again shortly', { cause });

/**
 * A write that the database ended to break a deadlock with other writes on every try it was given:
 * nothing of it is stored, and it may be sent again.
 */
export const deadlockLost = (cause: unknown): ApiError =>
  new ApiError('CORE_BUSY', 'Other requests were writing the same records at once; nothing was stored; try again shortly', { cause });

export function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}

/** A database error seen outside a repository: only outages are recognised (503). */
export const translateOutage = (error: unknown): ApiError | undefined =>
  isConnectionError(error) ? databaseUnavailable(error) : undefined;
