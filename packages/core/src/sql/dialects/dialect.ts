import type { Knex } from 'knex';
import type { FieldType } from '../../declarations';
import type { ApiError } from '../../errors';

/** What is known about a table in the database. */
export interface TableInfo {
  columns: Set<string>;
}

export interface Introspection {
  tables: Map<string, TableInfo>;
  indexes: Set<string>;
}

/** Context a translated database error can name (entity, unique index → fields). */
export interface ErrorContext {
  entity?: string;
  /** Index name or column list → API field names. */
  uniqueFields?: (indexOrColumns: string) => string[] | undefined;
}

/**
 * Everything that differs between databases, in one object per dialect. Nothing else sniffs the
 * client name.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The case-insensitive LIKE operator. */
  readonly likeOperator: 'like' | 'ilike';
  /** Column type for a field type that knex has no portable builder for. */
  columnType(type: FieldType, maxLength?: number): string;
  /** Value read from the driver → API value. */
  fromDb(type: FieldType, value: unknown): unknown;
  /** API value → value bound in SQL. */
  toDb(type: FieldType, value: unknown): unknown;
  /** SQL that is true when the JSON array column holds any of the bound values (one `?` each). */
  jsonArrayAnyOf(column: string, count: number): string;
  /**
   * An aggregate turning the rows of a query into one JSON text, an array of `count`-value arrays
   * ordered by the last of `count + 1` `?` (values or references); an empty array or NULL without
   * rows. One string instead of many rows is much less work for the driver.
   */
  jsonArrayRows(count: number): string;
  /** Reads tables, columns and index names of the current schema. */
  introspect(db: Knex | Knex.Transaction): Promise<Introspection>;
  /** Runs schema changes under a lock so that several processes can start at once. */
  withSchemaLock<TResult>(db: Knex, fn: (trx: Knex.Transaction) => Promise<TResult>): Promise<TResult>;
  /**
   * Whether writers lock rows (PostgreSQL) rather than the whole database (SQLite): then a
   * transaction that updates several rows locks them first, in id order, so that two of them
   * never wait for each other.
   */
  readonly locksRows: boolean;
  /** Whether an error ended the transaction to break a deadlock (running it again is safe). */
  isDeadlock(error: unknown): boolean;
  /** Driver error → ApiError, or undefined when it is not a known database condition. */
  translateError(error: unknown, context: ErrorContext): ApiError | undefined;
}
