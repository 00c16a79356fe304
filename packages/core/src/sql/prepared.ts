import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Connection } from './database';
import type { PreparedResult } from './dialects/dialect';
import type { SqlContext } from './sql-context';
import { ShapeCache } from '../util/shape-cache';

/**
 * Statements compiled once. knex builds a query once, with markers where the values of a request
 * go; its SQL text is kept and runs with each request's values on a connection of the pool (or
 * the connection of a transaction), without building or compiling the query again. The dialect
 * runs it on the driver: PostgreSQL as a named prepared statement (parsed and described once per
 * connection), SQLite as a statement prepared once per connection.
 *
 * The statements are those whose shape depends on the definitions and on the shape of a request
 * only (the fields read, the columns written), never on its values: values are always bound.
 */

/** The marker a value given at run time stands as while knex compiles the query. */
export type Param = (name: string) => string;

const MARK = '\u0001er-param:';
const param: Param = (name) => `${MARK}${name}\u0001`;

/** What a statement answers: its rows, its first row, or the number of rows it changed. */
export type PreparedMethod = 'rows' | 'first' | 'count';

/** Where a bound value comes from: a named value given at run time, or a constant of the query. */
type Slot = { name: string } | { value: unknown };

/** A statement compiled once, run many times with other values. */
export interface PreparedStatement {
  /** The SQL as the driver takes it (`$1` … on PostgreSQL, `?` on SQLite). */
  readonly sql: string;
  /** A name that only this text has: PostgreSQL prepares it under that name once per connection. */
  readonly name: string;
  readonly method: PreparedMethod;
  /** The bound values in order. */
  readonly slots: readonly Slot[];
}

/** The named values of one run of a statement. */
export type PreparedValues = Readonly<Record<string, unknown>>;

/**
 * Compiles the query `build` makes (with `param(name)` where a value given at run time goes) into
 * a statement. Throws when a marker did not become a bound value (a query that puts values into
 * its text cannot be compiled once).
 */
export function prepareStatement(method: PreparedMethod, build: (param: Param) => Knex.QueryBuilder | Knex.Raw): PreparedStatement {
  const native = build(param).toSQL().toNative();
  if (native.sql.includes(MARK)) throw new Error(`a value of a prepared statement is not bound: ${native.sql}`);
  const slots = native.bindings.map((value): Slot => (typeof value === 'string' && value.startsWith(MARK) ? { name: value.slice(MARK.length, -1) } : { value }));
  return { sql: native.sql, name: statementName(native.sql), method, slots };
}

/** A name that only this text has (PostgreSQL prepares a statement under it once per connection). */
const statementName = (text: string) => `er_${createHash('sha1').update(text).digest('base64url').slice(0, 24)}`;

/** The parts of knex's client a prepared statement runs through: its connections and its `query` event. */
interface KnexClient {
  acquireConnection(): Promise<KnexConnection>;
  releaseConnection(connection: KnexConnection): Promise<unknown>;
  emit(event: 'query', query: object): boolean;
}

interface KnexConnection {
  __knexUid?: string;
  __knexTxId?: string;
}

/** Runs of one statement on the pool at most, when connections holding stale statements are given up. */
const MAX_ATTEMPTS = 20;

/** The answer of a run in the shape its method says. */
function answer(method: PreparedMethod, result: PreparedResult): unknown {
  if (method === 'count') return result.count;
  if (method === 'first') return result.rows[0];
  return result.rows;
}

/**
 * Runs a compiled statement with `values` on the pool or in the transaction `sql.db` stands for.
 * The statement is announced as knex announces its own (the `query` event), so that statement
 * logs and counts see it. On the pool, a statement that failed because its connection's prepared
 * statements went stale runs again on another one: the dialect gives each such connection up, and
 * new ones have prepared nothing.
 */
export async function runPrepared<TResult>(sql: SqlContext, statement: PreparedStatement, values: PreparedValues): Promise<TResult> {
  return runBound<TResult>(sql, statement, statement.slots.map((slot) => ('name' in slot ? values[slot.name] : slot.value)));
}

/** Runs a compiled statement with its bound values in order (see `runPrepared`). */
async function runBound<TResult>(sql: SqlContext, statement: PreparedStatement, bindings: readonly unknown[]): Promise<TResult> {
  const db: Connection = sql.db;
  const inTransaction = (db as Knex.Transaction).isTransaction === true;
  if (inTransaction && (db as Knex.Transaction).isCompleted()) throw new Error('Transaction query already complete');
  const client = db.client as KnexClient;
  for (let attempt = 1; ; attempt += 1) {
    const connection = await client.acquireConnection();
    try {
      client.emit('query', { __knexUid: connection.__knexUid, __knexTxId: connection.__knexTxId, method: 'raw', sql: statement.sql, bindings });
      return answer(statement.method, await sql.dialect.runPrepared(connection, statement, bindings)) as TResult;
    } catch (error) {
      if (inTransaction || attempt >= MAX_ATTEMPTS || !sql.dialect.isStalePrepared(error)) throw error;
    } finally {
      await client.releaseConnection(connection);
    }
  }
}

/** A statement whose SQL is written by hand, with a `?` for each bound value. */
export interface TextStatement {
  method: PreparedMethod;
  /** What the text depends on: statements of one key have one text. */
  key: string;
  /** The text, made on the first run of the key. */
  text: () => string;
}

/**
 * Runs SQL text written with a `?` for each of `bindings`, compiled once per key: for statements
 * whose text repeats while their values change (a recordset of the same shape). A text of knex's
 * own making would be compiled by `prepareStatement` instead.
 */
export function runText<TResult>(sql: SqlContext, { method, key, text }: TextStatement, bindings: readonly unknown[]): Promise<TResult> {
  let texts = textStatements.get(sql.statements);
  if (!texts) textStatements.set(sql.statements, (texts = new ShapeCache(MAX_TEXT_STATEMENTS)));
  const statement = texts.get(`${method}:${key}`, () => {
    const compiled = prepareStatement(method, (mark) => sql.db.raw(text(), bindings.map((_, i) => mark(String(i)))));
    // Run with the bindings in order: no slots to keep (a recordset's are thousands).
    return { ...compiled, slots: [] };
  });
  return runBound<TResult>(sql, statement, bindings);
}

/**
 * Statements of `runText`, per database, apart from the others: a recordset's text grows with its
 * rows on SQLite, and batches of many sizes would otherwise fill the cache with long texts.
 */
const textStatements = new WeakMap<object, ShapeCache<PreparedStatement>>();
const MAX_TEXT_STATEMENTS = 64;

/**
 * Runs SQL already in the driver's form (`$1` … on PostgreSQL, `?` on SQLite) with its bindings in
 * order: a statement put together from parts compiled already (a page's select around the
 * subquery knex compiled for the list's conditions). PostgreSQL plans it for each run's values (an
 * unnamed statement): a plan made once for every value of a list's conditions (a generic plan of
 * a named one) chose worse for filters whose cost depends on the values (`contains`, ranges).
 */
export function runNative<TResult>(sql: SqlContext, { method, text }: { method: PreparedMethod; text: string }, bindings: readonly unknown[]): Promise<TResult> {
  return runBound<TResult>(sql, { sql: text, name: '', method, slots: [] }, bindings);
}
