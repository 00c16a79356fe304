import { createHash } from 'node:crypto';
import type { FieldType } from '../../declarations';
import type { Knex } from 'knex';
import { KeyTakenMeanwhile, type Dialect, type Introspection } from './dialect';
import { PostgresNotifications } from './postgres-notifications';
import { isStalePostgresStatement, runPostgresStatement, sendOn } from './postgres-statements';
import { commonColumnType, databaseUnavailable, quoteName, statementTimedOut, uniqueViolation } from './shared';

/** The 64-bit key of an advisory lock named by `key` (the first 8 bytes of its hash), as text for a bigint parameter. */
export const advisoryKey = (key: string): string => createHash('sha256').update(key).digest().readBigInt64BE(0).toString();

/** An arbitrary fixed key for the advisory lock taken while the schema is synced. */
const SCHEMA_LOCK_KEY = 482_113_907;

/** The savepoint an insert of new rows runs in (see insertNew). */
const NEW_ROWS_SAVEPOINT = 'er_new_rows';

/** The statement timeout of an instance that sets none (CONTRACT §17), in ms. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * The `statement_timeout` of every connection an instance opens to PostgreSQL, in ms (0: none):
 * the pool's, the listening connection's (taken from the pool's settings) and the job queue's
 * (pg-boss), so that no statement of the instance runs unbounded. Only the schema sync at start
 * lifts it, for its transaction (`withSchemaLock`).
 */
export const statementTimeout = (statementTimeoutMs: number | undefined): number => statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;

/** query_canceled: the statement timeout (`statementTimeoutMs`) ran out. */
const STATEMENT_TIMEOUT_STATE = '57014';

/**
 * SQLSTATE classes that mean the server is gone or refusing, not that the query is wrong: also
 * a database that no longer exists (dropped, or not yet restored), which new connections meet.
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57P04', '53300', '08000', '08001', '08003', '08006', '3D000']);

/**
 * A new connection to a database that accepts none now (`ALTER DATABASE … ALLOW_CONNECTIONS
 * false`, as during maintenance): object_not_in_prerequisite_state, raised by the check of the
 * database at connect time. That state means other things elsewhere, hence the routine too (its
 * name is not translated, unlike the message).
 */
const isRefusedConnection = (error: unknown): boolean =>
  (error as { code?: unknown }).code === '55000' && (error as { routine?: unknown }).routine === 'CheckMyDatabase';

/** Column types PostgreSQL names its own way; the others are those both databases share. */
const POSTGRES_COLUMN_TYPES: ReadonlyMap<FieldType, string> = new Map([
  ['float', 'double precision'],
  ['date', 'date'],
  ['datetime', 'timestamp(0)'],
  ['multiEnum', 'jsonb'],
  ['jsonObject', 'jsonb'],
]);

/** OIDs whose text form we keep as it is: date, timestamp, timestamptz; int8 and numeric become numbers. */
const RAW_TEXT_OIDS = new Set([1082, 1114, 1184]);
const NUMBER_OIDS = new Set([20, 1700]);

const asText = (value: string) => value;
const asNumber = (value: string) => Number(value);

function pgTypes() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pgTypesModule = require('pg').types as { getTypeParser: (oid: number, format?: string) => unknown };
  return {
    // Asked for every column of every result: the parsers are made once.
    getTypeParser(oid: number, format?: string) {
      if (RAW_TEXT_OIDS.has(oid)) return asText;
      if (NUMBER_OIDS.has(oid)) return asNumber;
      return pgTypesModule.getTypeParser(oid, format);
    },
  };
}

/** `{"a","b"}`: the text of a PostgreSQL array of these values. */
const arrayLiteral = (values: readonly (string | number)[]): string =>
  `{${values.map((v) => (typeof v === 'number' ? String(v) : `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`)).join(',')}}`;

export const postgresDialect: Dialect = {
  name: 'postgres',
  blocksEventLoop: false,
  live: false,
  sequenceColumn: 'bigserial primary key',
  writableCte: true,
  typedReads: true,
  enforcesLength: true,
  defaultJobQueue: 'pg-boss',

  connect({ url, poolSize, statementTimeoutMs }) {
    if (!/^postgres(ql)?:\/\//.test(url)) return undefined;
    return {
      client: 'pg',
      // The server cancels a statement past the timeout (SQLSTATE 57014); set per connection.
      connection: { connectionString: url, types: pgTypes(), statement_timeout: statementTimeout(statementTimeoutMs) } as Knex.PgConnectionConfig,
      pool: { min: 0, max: poolSize ?? 10 },
    };
  },

  notifications: (knex) => new PostgresNotifications(knex),

  // Not a date-time (its JSON has a `T`), nor JSON columns (jsonb orders an object's keys its own
  // way). A float is printed as the shortest text that reads back as the same number (with
  // PostgreSQL's default extra_float_digits), as JavaScript prints it.
  jsonAsShown: new Set(['varchar', 'text', 'enum', 'link', 'int', 'bool', 'float', 'date']),

  recordset(rows, { table, columns, jsonColumns = [] }) {
    // Rows go as objects of the given columns only (a column bound once is left out), typed by the
    // table; JSON columns hold JSON text, in the document they go as JSON.
    const json = columns.map((c) => jsonColumns.includes(c));
    const from = `json_populate_recordset(null::${quoteName(table)}, ?::json) as v`;
    const shape = { from, key: '', value: (c: string) => `v.${quoteName(c)}` };
    if (!json.includes(true)) {
      // Every value is plain: rows that hold just the columns go as they are; of others, the column
      // list picks the values as the text is made, with no copy of each row (a fifth faster for a
      // batch of new records).
      const whole = rows.length > 0 && Object.keys(rows[0]).length === columns.length;
      return { ...shape, bindings: [whole ? JSON.stringify(rows) : JSON.stringify(rows, columns as string[])] };
    }
    const picked = rows.map((row) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) {
        const value = row[columns[i]];
        out[columns[i]] = json[i] && typeof value === 'string' ? JSON.parse(value) : value;
      }
      return out;
    });
    return { ...shape, bindings: [JSON.stringify(picked)] };
  },

  recordsetRows: () => 5000,

  // A plain insert costs about a third less than ON CONFLICT DO NOTHING, which inserts every row
  // speculatively, and a conflict is rare (another request stored one of the keys since they were
  // looked up): the plain insert is tried first, in a savepoint, and only after a unique violation
  // are the rows inserted again skipping those whose key is taken. The savepoint and the insert
  // are queued together: pg sends the insert as soon as the savepoint is taken, and the caller
  // goes on while the database inserts. With `failOnTaken` (a caller that can decide its batch
  // again), the insert goes alone: no savepoint, no subtransaction, two statements fewer.
  // With `logging`, the plain insert also logs the changes of its rows; the insert that skips
  // taken keys does not (the caller logs the changes of the rows it stored).
  async insertNew({ db: trx }, { sql, bindings, ids, logging, failOnTaken }) {
    const send = await sendOn(trx);
    const insert = trx.raw(sql(), bindings as Knex.RawBinding[]).toSQL().toNative();
    const first = logging ? trx.raw(logging.wrap(sql()), [...bindings, ...logging.bindings] as Knex.RawBinding[]).toSQL().toNative() : insert;
    const keyTaken = (error: unknown) => postgresDialect.translateError(error, {})?.code === 'CORE_UNIQUE_VIOLATION';
    if (failOnTaken) {
      const stored = send(first.sql, first.bindings).then(
        () => ({ ids: [...ids], logged: !!logging }),
        (error: unknown) => {
          throw keyTaken(error) ? new KeyTakenMeanwhile({ cause: error }) : error;
        },
      );
      // The caller awaits it after its own work; a failure before that is not unhandled.
      stored.catch(() => undefined);
      return { stored };
    }
    const taken = send(`savepoint ${NEW_ROWS_SAVEPOINT}`);
    const inserted = send(first.sql, first.bindings);
    // Handled below, once the savepoint answers: a failure meanwhile is not left unhandled.
    inserted.catch(() => undefined);
    await taken;
    const stored = inserted.then(
      async () => {
        await send(`release savepoint ${NEW_ROWS_SAVEPOINT}`);
        return { ids: [...ids], logged: !!logging };
      },
      async (error: unknown) => {
        if (!keyTaken(error)) throw error;
        await send(`rollback to savepoint ${NEW_ROWS_SAVEPOINT}`);
        const { rows } = await send(`${insert.sql} on conflict do nothing returning id`, insert.bindings);
        await send(`release savepoint ${NEW_ROWS_SAVEPOINT}`);
        return { ids: rows.map((r) => r.id as string), logged: false };
      },
    );
    // The caller awaits it after its own work; a failure before that is not unhandled.
    stored.catch(() => undefined);
    return { stored };
  },

  bool(value) {
    return value ? 'true' : 'false';
  },

  // The same matches as ILIKE, which lowers both sides too (and the pattern again for every
  // row), in the form a trigram index of lower(column) serves (searchIndex). A backslash is
  // PostgreSQL's default LIKE escape; an ESCAPE clause would hide the pattern from the planner
  // behind like_escape().
  likeSql(column, not) {
    return `lower(${column}) ${not ? 'not ' : ''}like lower(?)`;
  },

  // "C" orders by bytes, which in UTF-8 is code point order: the order SQLite has. A database made
  // with a language locale (en_US.UTF-8, ICU) would otherwise sort "apple" before "Banana".
  codePointOrder(expression) {
    return `${expression} collate "C"`;
  },

  // Trigrams serve contains, startsWith, endsWith and like patterns with three characters or
  // more between wildcards (and any prefix); shorter ones read every row, as without the index.
  searchIndex: {
    extension: 'pg_trgm',
    create: (name, table, column) => `create index ${quoteName(name)} on ${quoteName(table)} using gin (lower(${quoteName(column)}) gin_trgm_ops)`,
  },

  async lock(trx, keys) {
    if (keys.length === 0) return;
    const ids = [...new Set(keys)].map(advisoryKey).sort();
    await trx.raw('select pg_advisory_xact_lock(k) from unnest(?::bigint[]) as k order by k', [ids]);
  },

  locksRows: true,

  rawRows(result) {
    return ((result as { rows?: Record<string, unknown>[] } | null)?.rows ?? []);
  },

  skipLocked: 'for update skip locked',

  isDeadlock(error) {
    // 40P01: deadlock detected; 40001: serialization failure. Either way the transaction was rolled back.
    const code = (error as { code?: unknown } | null)?.code;
    return code === '40P01' || code === '40001';
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

  whereAnyOf(qb, column, values) {
    // An array literal without a type: PostgreSQL reads it as an array of the column's type.
    if (values.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) qb.whereRaw('?? = any(?)', [column, arrayLiteral(values as (string | number)[])]);
    else qb.whereIn(column, values as never[]);
  },

  jsonArrayAnyOf(column, count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    return `${column} \\?| array[${marks}]::text[]`;
  },

  jsonArrayLinksLive(column, targetTable, count) {
    const ids = count ? ` and e.id in (${Array.from({ length: count }, () => '?').join(', ')})` : '';
    return `exists (select 1 from jsonb_array_elements_text(${column}) as e(id) join ${targetTable} as t on t.id = e.id where t.deleted = false${ids})`;
  },

  runPrepared: runPostgresStatement,
  isStalePrepared: isStalePostgresStatement,

  jsonArrayRows(count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    return `json_agg(json_build_array(${marks}) order by ?)::text`;
  },

  async introspect(db) {
    const result: Introspection = { tables: new Map(), indexes: new Set(), extensions: new Set() };
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
    const extensions = await db.raw('select extname from pg_extension');
    for (const row of extensions.rows as { extname: string }[]) result.extensions.add(row.extname);
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
      const { constraint = '', table } = error as { constraint?: string; table?: string };
      return uniqueViolation(context, { key: constraint, table }, error);
    }
    if (UNAVAILABLE_STATES.has(code) || isRefusedConnection(error)) return databaseUnavailable(error);
    if (code === STATEMENT_TIMEOUT_STATE) return statementTimedOut(error);
    return undefined;
  },
};
