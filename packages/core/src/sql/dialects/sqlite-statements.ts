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

/**
 * Statements prepared per connection, by their name (see prepared.ts); a connection that has
 * prepared this many starts over. Long statements (VALUES lists of many rows: a list of 500 rows of
 * 14 columns holds about half a MiB once prepared) are kept apart, fewer of them.
 */
const LIMIT = 500;
const LONG_LIMIT = 16;
const LONG_SQL = 4096;
const prepared = new WeakMap<Connection, { short: Map<string, Statement>; long: Map<string, Statement> }>();

/** A connection's statement named `name`, prepared from `sql` on first use. */
function statementOf(connection: Connection, { sql, name }: { sql: string; name: string }): Statement {
  let kept = prepared.get(connection);
  if (!kept) prepared.set(connection, (kept = { short: new Map(), long: new Map() }));
  const [statements, limit] = sql.length > LONG_SQL ? [kept.long, LONG_LIMIT] : [kept.short, LIMIT];
  // A statement without a name (planned for each run on PostgreSQL) is kept by its text here.
  const key = name || sql;
  let statement = statements.get(key);
  if (!statement) {
    if (statements.size >= limit) statements.clear();
    statement = connection.prepare(sql);
    statements.set(key, statement);
  }
  return statement;
}

const needsConversion = (value: unknown) => typeof value === 'boolean' || value instanceof Date;

/** Values as knex binds them for better-sqlite3: dates as milliseconds, booleans as 0 and 1 (a copy only when one needs it). */
function toBindings(values: readonly unknown[]): readonly unknown[] {
  if (!values.some(needsConversion)) return values;
  return values.map((value) => (value instanceof Date ? value.valueOf() : typeof value === 'boolean' ? Number(value) : value));
}

/**
 * Runs a statement on a better-sqlite3 connection, prepared once per connection (SQLite parses
 * and plans a statement when it is prepared). Statements run to completion at once: one prepared
 * statement never serves two runs at the same time.
 */
export function runSqliteStatement(connection: unknown, statement: { sql: string; name: string }, bindings: readonly unknown[]): PreparedResult {
  const compiled = statementOf(connection as Connection, statement);
  const values = toBindings(bindings) as unknown[];
  if (compiled.reader) {
    const rows = compiled.all(values);
    return { rows, count: rows.length };
  }
  return { rows: [], count: compiled.run(values).changes };
}
