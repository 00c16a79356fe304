import type { Knex } from 'knex';
import type { FieldType } from '../../declarations';
import type { ApiError } from '../../errors';
import type { Notifications } from '../notifications';
import type { SqlContext } from '../sql-context';

/** What is known about a table in the database. */
export interface TableInfo {
  columns: Set<string>;
}

export interface Introspection {
  tables: Map<string, TableInfo>;
  indexes: Set<string>;
  /** Extensions installed in the database (PostgreSQL; empty on SQLite). */
  extensions: Set<string>;
}

/**
 * An index that lets the database answer the `like` family of filters (likeSql) on one column
 * without reading every row.
 */
export interface SearchIndex {
  /** The extension the index needs, created by schema sync when missing (skipped with a warning when it cannot be). */
  extension: string;
  /** The statement creating the index `name` on `table`.`column`. */
  create(name: string, table: string, column: string): string;
}

/** Context a translated database error can name (entity, unique index → fields). */
export interface ErrorContext {
  entity?: string;
  /** Index name or column list → API field names. */
  uniqueFields?: (indexOrColumns: string) => string[] | undefined;
  /**
   * The context of another table than the entity's own, where a write of the entity's records
   * also writes rows of another type (`Brand.products` sets each product's brand): an index of
   * that table is named by its own entity and fields.
   */
  ofTable?: (table: string) => ErrorContext | undefined;
}

/**
 * Rows of one table read by one statement as a table: on PostgreSQL one JSON document bound to a
 * single parameter (one parse and one plan whatever the number of rows); on SQLite a VALUES list
 * with a parameter per value (the driver binds them in the process, which costs less than SQLite
 * parsing a document; `recordsetRows` bounds the rows per statement).
 */
export interface Recordset {
  /** The bound values, in order. */
  bindings: unknown[];
  /** The FROM item that reads them, aliased `v`, with their `?`. */
  from: string;
  /** What of `from` depends on the rows, beside the table and columns (their number on SQLite). */
  key: string;
  /** The SQL of one column's value in the current row. */
  value(column: string): string;
}

/**
 * The table rows go into: its name, the columns the rows set (in that order), those of them that
 * hold JSON (their values given as JSON text or as the value itself).
 */
export interface RowShape {
  table: string;
  columns: readonly string[];
  jsonColumns?: readonly string[];
}

/** What a statement run on the driver answers: its rows (none for a write without RETURNING) and the rows it read or changed. */
export interface PreparedResult {
  rows: Record<string, unknown>[];
  count: number;
}

/** How a database is reached: the knex configuration of a URL the dialect serves. */
export interface ConnectOptions {
  url: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** PostgreSQL: the longest a statement may run, in ms (0: no limit). */
  statementTimeoutMs?: number;
}

/**
 * An insert under way: `stored` answers the ids it stored once it is done, and whether it logged
 * their changes too (`logging`: only a plain insert that stored every row does).
 */
export interface InsertStarted {
  readonly stored: Promise<{ ids: string[]; logged: boolean }>;
}

/** An insert of new rows met a unique key another request stored meanwhile (see `insertNew`'s `failOnTaken`). */
export class KeyTakenMeanwhile extends Error {
  constructor(options?: { cause?: unknown }) {
    super('A key of a new row was stored meanwhile by another request', options);
    this.name = 'KeyTakenMeanwhile';
  }
}

/** What turns an insert into one that logs its rows' changes (see `createsLoggedByInsert`). */
export interface InsertLogging {
  /** The statement logging the changes of the rows `insert` stores, with `insert` in it. */
  wrap(insert: string): string;
  /** The values of the markers `wrap` adds, after those of the insert. */
  bindings: readonly unknown[];
}

/**
 * Everything that differs between databases, in one object per dialect. Nothing else sniffs the
 * client name.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The driver runs statements in this process's thread (better-sqlite3): long work yields between batches. */
  readonly blocksEventLoop: boolean;
  /**
   * The knex configuration for `url`, or undefined when the URL is not of this database. Throws
   * for a URL of this database that names nothing usable.
   */
  connect(options: ConnectOptions): Knex.Config | undefined;
  /** The driver answers booleans and JSON columns as API values already (no decoding of rows). */
  readonly typedReads: boolean;
  /** varchar lengths are enforced by the database (a longer `maxLength` must widen the column). */
  readonly enforcesLength: boolean;
  /** The job queue a database gets unless told otherwise. */
  readonly defaultJobQueue: 'pg-boss' | 'in-process';
  /** Messages between the processes sharing the database (NOTIFY), or within this process only. */
  notifications(knex: Knex): Notifications;
  /**
   * Field types whose column the database turns into the JSON value the API shows
   * (`to_json` of the column): a created record's diff can be built from its row (see
   * `createsLoggedByInsert`). Empty where the database builds none.
   */
  readonly jsonAsShown: ReadonlySet<FieldType>;
  /** `rows` (keyed by column) bound as one table (see `Recordset`). */
  recordset(rows: readonly Record<string, unknown>[], shape: RowShape): Recordset;
  /** The most rows of `columns` columns one recordset may hold. */
  recordsetRows(columns: number): number;
  /**
   * Starts an `insert … select … from <recordset>`; `stored` answers the ids stored: rows whose
   * unique key another request stored meanwhile are skipped (the caller replays them as updates).
   * With `failOnTaken`, where requests race (PostgreSQL) such a row fails the insert instead, and
   * the transaction with it (`KeyTakenMeanwhile`): the insert is one statement, not three, and the
   * caller decides the batch again. Answers as soon as the database has the insert: the caller may
   * work while it inserts.
   */
  insertNew(sql: SqlContext<Knex.Transaction>, insert: { key: string; sql: () => string; bindings: readonly unknown[]; ids: readonly string[]; logging?: InsertLogging; failOnTaken?: boolean }): Promise<InsertStarted>;
  /** The value of the `deleted` column in live rows, as bound in SQL. */
  readonly live: boolean | number;
  /** A boolean as a SQL literal (`true`, or `1` on SQLite). */
  bool(value: boolean): string;
  /**
   * Holds a lock on each key until the transaction ends, so that writers of the same keys take
   * turns (find-or-create of one new record by several requests). Keys are taken in sorted order.
   */
  lock(trx: Knex.Transaction, keys: readonly string[]): Promise<void>;
  /** The SQL type of a column the database numbers itself, growing with every row, as primary key. */
  readonly sequenceColumn: string;
  /**
   * Whether one statement can update a row and insert a row elsewhere (a data-modifying `WITH`):
   * an update and its change log entry then cost one round trip and no transaction.
   */
  readonly writableCte: boolean;
  /**
   * SQL matching `column` (quoted) against one bound LIKE pattern, case-insensitively, a backslash
   * escaping the next character (`not`: the rows that do not match).
   */
  likeSql(column: string, not: boolean): string;
  /**
   * SQL of a text `expression` as it sorts and compares (`order by`, `<`, `between`): in code
   * point order on both databases, as SQLite's BINARY collation orders, whatever the locale a
   * PostgreSQL database was made with ("Banana" before "apple", "Ä" after "z").
   */
  codePointOrder(expression: string): string;
  /** The index schema sync gives a `searchable` field, in a form likeSql can use; none when the database has none worth it. */
  readonly searchIndex?: SearchIndex;
  /** Column type for a field type that knex has no portable builder for. */
  columnType(type: FieldType, maxLength?: number): string;
  /** Value read from the driver → API value. */
  fromDb(type: FieldType, value: unknown): unknown;
  /** API value → value bound in SQL. */
  toDb(type: FieldType, value: unknown): unknown;
  /**
   * Narrows a query to the rows whose `column` holds one of `values` (bound values of the column's
   * type). Many values cost one parameter on PostgreSQL (`= any(array)`), which spares the
   * parsing and binding of a long IN list on both sides of the connection.
   */
  whereAnyOf(qb: Knex.QueryBuilder, column: string, values: readonly unknown[]): void;
  /** SQL that is true when the JSON array column holds any of the bound values (one `?` each). */
  jsonArrayAnyOf(column: string, count: number): string;
  /**
   * SQL that is true when the JSON array of ids in `column` names a live record of the table
   * `targetTable` (quoted): any one, or with `count` one of that many bound ids (one `?` each).
   */
  jsonArrayLinksLive(column: string, targetTable: string, count?: number): string;
  /**
   * An aggregate turning the rows of a query into one JSON text, an array of `count`-value arrays
   * ordered by the last of `count + 1` `?` (values or references); an empty array or NULL without
   * rows. One string instead of many rows is much less work for the driver.
   */
  jsonArrayRows(count: number): string;
  /**
   * Runs a statement compiled once (`sql` as the driver takes it, `name` unique to the text) on a
   * raw connection of knex's pool, without knex: PostgreSQL prepares it under its name once per
   * connection, SQLite keeps the prepared statement of each connection.
   */
  runPrepared(connection: unknown, statement: { sql: string; name: string }, bindings: readonly unknown[]): Promise<PreparedResult>;
  /**
   * Whether a prepared statement failed because what its connection prepared went stale (the type
   * of a column changed): it did nothing, its connection is given up, and it may run again on
   * another connection of the pool.
   */
  isStalePrepared(error: unknown): boolean;
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
  /** The rows a raw statement answered (a `select`, or a write with `returning`). */
  rawRows(result: unknown): Record<string, unknown>[];
  /**
   * The clause a `select` of queue rows ends with so that workers of several processes each take
   * other rows (`for update skip locked`); empty where one writer runs at a time.
   */
  readonly skipLocked: string;
  /** Whether an error ended the transaction to break a deadlock, or a serialization conflict (running it again is safe). */
  isDeadlock(error: unknown): boolean;
  /** Driver error → ApiError, or undefined when it is not a known database condition. */
  translateError(error: unknown, context: ErrorContext): ApiError | undefined;
}
