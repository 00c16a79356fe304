import type { FieldType } from '../../declarations';
import type { Dialect, Introspection } from './dialect';
import { commonColumnType, databaseUnavailable, statementTimedOut, uniqueViolation } from './shared';

/** An arbitrary fixed key for the advisory lock taken while the schema is synced. */
const SCHEMA_LOCK_KEY = 482_113_907;

/** query_canceled: the statement timeout (`statementTimeoutMs`) ran out. */
const STATEMENT_TIMEOUT_STATE = '57014';

/**
 * SQLSTATE classes that mean the server is gone or refusing, not that the query is wrong: also
 * a database that no longer exists (dropped, or not yet restored), which new connections meet.
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57P04', '53300', '08000', '08001', '08003', '08006', '3D000']);

/** Column types PostgreSQL names its own way; the others are those both databases share. */
const POSTGRES_COLUMN_TYPES: ReadonlyMap<FieldType, string> = new Map([
  ['float', 'double precision'],
  ['date', 'date'],
  ['datetime', 'timestamp(0)'],
  ['multiEnum', 'jsonb'],
  ['jsonObject', 'jsonb'],
]);

export const postgresDialect: Dialect = {
  name: 'postgres',
  likeOperator: 'ilike',
  locksRows: true,

  isDeadlock(error) {
    return (error as { code?: unknown } | null)?.code === '40P01';
  },

  columnType(type, maxLength) {
    return POSTGRES_COLUMN_TYPES.get(type) ?? commonColumnType(type, maxLength);
  },

  fromDb(_type, value) {
    return value ?? null;
  },

  toDb(type, value) {
    if (value === null || value === undefined) return null;
    if (type === 'multiEnum' || type === 'jsonObject') return JSON.stringify(value);
    return value;
  },

  jsonArrayAnyOf(column, count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    return `${column} \\?| array[${marks}]::text[]`;
  },

  jsonArrayRows(count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    return `json_agg(json_build_array(${marks}) order by ?)::text`;
  },

  async introspect(db) {
    const result: Introspection = { tables: new Map(), indexes: new Set() };
    const columns = await db.raw(
      'select table_name, column_name from information_schema.columns where table_schema = current_schema()',
    );
    for (const row of columns.rows as { table_name: string; column_name: string }[]) {
      let table = result.tables.get(row.table_name);
      if (!table) result.tables.set(row.table_name, (table = { columns: new Set() }));
      table.columns.add(row.column_name);
    }
    const indexes = await db.raw('select indexname from pg_indexes where schemaname = current_schema()');
    for (const row of indexes.rows as { indexname: string }[]) result.indexes.add(row.indexname);
    return result;
  },

  async withSchemaLock(db, fn) {
    return db.transaction(async (trx) => {
      // Requests have a statement timeout; an index built on a large table (or the wait for
      // another process's sync) may take longer, and a start must not fail for it.
      await trx.raw('set local statement_timeout = 0');
      await trx.raw('select pg_advisory_xact_lock(?)', [SCHEMA_LOCK_KEY]);
      return fn(trx);
    });
  },

  translateError(error, context) {
    const code = (error as { code?: string } | null)?.code;
    if (typeof code !== 'string') return undefined;
    if (code === '23505') {
      const constraint = (error as { constraint?: string }).constraint ?? '';
      return uniqueViolation(context, constraint, error);
    }
    if (UNAVAILABLE_STATES.has(code)) return databaseUnavailable(error);
    if (code === STATEMENT_TIMEOUT_STATE) return statementTimedOut(error);
    return undefined;
  },
};
