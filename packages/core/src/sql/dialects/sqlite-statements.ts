import type { PreparedResult } from './dialect';

/** The parts of a better-sqlite3 statement and connection that run a statement prepared once. */
interface Statement {
  readonly reader: boolean;
  all(bindings: readonly unknown[]): Record<string, unknown>[];
  run(bindings: readonly unknown[]): { changes: number };
}

interface Connection {
  prepare(sql: string): Statement;
}

/** Statements prepared per connection, by their text; a connection that has prepared this many starts over. */
const LIMIT = 500;
const prepared = new WeakMap<Connection, Map<string, Statement>>();

/** A connection's statement for `sql`, prepared on first use. */
function statementOf(connection: Connection, sql: string): Statement {
  let statements = prepared.get(connection);
  if (!statements) prepared.set(connection, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) {
    if (statements.size >= LIMIT) statements.clear();
    statement = connection.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

/** Values as knex binds them for better-sqlite3: dates as milliseconds, booleans as 0 and 1. */
const toBinding = (value: unknown): unknown => (value instanceof Date ? value.valueOf() : typeof value === 'boolean' ? Number(value) : value);

/**
 * Runs a statement on a better-sqlite3 connection, prepared once per connection (SQLite parses
 * and plans a statement when it is prepared). Statements run to completion at once: one prepared
 * statement never serves two runs at the same time.
 */
export function runSqliteStatement(connection: unknown, sql: string, bindings: readonly unknown[]): PreparedResult {
  const statement = statementOf(connection as Connection, sql);
  const values = bindings.map(toBinding);
  if (statement.reader) {
    const rows = statement.all(values);
    return { rows, count: rows.length };
  }
  return { rows: [], count: statement.run(values).changes };
}
