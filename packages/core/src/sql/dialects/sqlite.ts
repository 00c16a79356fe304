import fs from 'node:fs';
import path from 'node:path';
import type { FieldType } from '../../declarations';
import { BootError } from '../../errors';
import { LocalNotifications } from '../notifications';
import type { Dialect, Introspection } from './dialect';
import { ShapeCache } from '../../util/shape-cache';
import { runText } from '../prepared';
import { sqliteClient, STATEMENT_BUSY_MS } from './sqlite-client';
import { runSqliteStatement } from './sqlite-statements';
import { commonColumnType, databaseUnavailable, parseJson, uniqueViolation } from './shared';

/** What of a better-sqlite3 connection is set up when it opens. */
interface SqliteConnection {
  pragma(sql: string): unknown;
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): unknown;
}

/** A function of every connection: lower case of all of Unicode (SQLite's lower() knows ASCII only). */
const UNICODE_LOWER = 'er_lower';

/**
 * Lower case letter by letter, as PostgreSQL's lower() maps each character on its own (Unicode's
 * simple mapping). JavaScript's toLowerCase() differs for two letters only: `İ` becomes two
 * characters (`i` and a combining dot), and `Σ` at the end of a word becomes `ς`; then "ΟΔΟΣ"
 * contained `σ` on PostgreSQL but not here, and `ς` here but not there.
 */
function lowerLetters(text: string): string {
  return text.replace(/[\u0130\u03a3]/g, (c) => (c === '\u0130' ? 'i' : '\u03c3')).toLowerCase();
}

const JSON_TYPES: ReadonlySet<FieldType> = new Set(['multiEnum', 'jsonObject']);

/** SQLite's limit on the parameters of one statement (SQLITE_MAX_VARIABLE_NUMBER). */
const MAX_BINDINGS = 32_766;
const MAX_RECORDSET_ROWS = 5000;

/** The most rows of `columns` columns (and the marker) one VALUES list holds. */
const recordsetRows = (columns: number) => Math.min(MAX_RECORDSET_ROWS, Math.floor(MAX_BINDINGS / (columns + 1)));

/**
 * The rows a VALUES list of `rows` rows is padded to: as many up to 16, else the next power of
 * two. Each size is a statement to prepare and keep; few sizes serve every batch size, each
 * still in one statement.
 */
const paddedRows = (rows: number, max: number) => (rows <= 16 ? rows : Math.min(max, 2 ** Math.ceil(Math.log2(rows))));

/** `(?, ?), (?, ?)`: `rows` rows of `columns` parameters, made once per size. */
const valuesLists = new ShapeCache<string>(200);
const valuesList = (columns: number, rows: number): string =>
  valuesLists.get(`${columns}x${rows}`, () => {
    const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
    return Array.from({ length: rows }, () => row).join(', ');
  });

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  blocksEventLoop: true,
  live: 0,
  sequenceColumn: 'integer primary key autoincrement',
  writableCte: false,
  typedReads: false,
  enforcesLength: false,
  defaultJobQueue: 'in-process',

  // `sqlite:data/x.db`, `sqlite:/abs/x.db`, `sqlite://data/x.db`, `sqlite:///abs/x.db` and a bare path all name a file.
  connect({ url }) {
    if (!url.startsWith('sqlite:') && url.includes('://')) return undefined;
    const file = url.replace(/^sqlite:(\/\/)?/, '');
    if (!file) throw new BootError('CORE_CONFIG_INVALID', `database URL '${url}' names no file`);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    return {
      client: sqliteClient(),
      connection: { filename: file },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) {
          if (file !== ':memory:') conn.pragma('journal_mode = WAL');
          conn.function(UNICODE_LOWER, { deterministic: true }, (text) => (typeof text === 'string' ? lowerLetters(text) : text));
          conn.pragma('foreign_keys = ON');
          conn.pragma(`busy_timeout = ${STATEMENT_BUSY_MS}`);
          conn.pragma('synchronous = NORMAL');
          done(null, conn);
        },
      },
    };
  },

  // One process: its listeners are told directly.
  notifications: () => new LocalNotifications(),

  // A created record's changes are logged from the process (no writable CTE).
  jsonAsShown: new Set(),

  recordset(rows, { columns, jsonColumns = [] }) {
    // Bound value by value: better-sqlite3 binds in the process, for less than SQLite's JSON
    // functions take to parse a document and take it apart again (bench/README.md, "2026-11-26,
    // later"). Each row starts with a marker, 1; the rows that pad the list to its size are NULL
    // throughout and left out. A JSON column's value given as an object is stored as its text.
    const json = columns.map((c) => jsonColumns.includes(c));
    const width = columns.length + 1;
    const size = paddedRows(rows.length, recordsetRows(columns.length));
    const bindings = new Array<unknown>(size * width).fill(null, rows.length * width);
    let at = 0;
    for (const row of rows) {
      bindings[at++] = 1;
      for (let i = 0; i < columns.length; i++) {
        const value = row[columns[i]];
        bindings[at++] = json[i] && value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
      }
    }
    const position = new Map(columns.map((c, i) => [c, i + 2]));
    return {
      bindings,
      from: `(select * from (values ${valuesList(width, size)}) where column1 is not null) as v`,
      key: String(size),
      value: (c) => `v.column${position.get(c) as number}`,
    };
  },

  recordsetRows,

  // One writer at a time: skipping taken keys in the same statement costs nothing. `where true`
  // tells SQLite's parser that ON CONFLICT belongs to the insert, not to a join.
  async insertNew(sql, { key, sql: insert, bindings }) {
    const statement = { method: 'rows' as const, key: `new:${key}`, text: () => `${insert()} where true on conflict do nothing returning "id"` };
    // The driver is synchronous: the insert is done when it answers.
    const stored = (await runText<{ id: string }[]>(sql, statement, bindings)).map((r) => r.id);
    // No writable CTE: an insert logs nothing (`logging` is never offered).
    return { stored: Promise.resolve({ ids: stored, logged: false }) };
  },

  bool(value) {
    return value ? '1' : '0';
  },

  // SQLite's own LIKE and lower() ignore the case of ASCII letters only: both sides are lowered
  // letter by letter (lowerLetters, as PostgreSQL's lower() does), so that "Ärmel" contains "ärm" on both
  // databases. No searchIndex: reading the rows costs far more than matching them (bench/README.md,
  // "Text search").
  likeSql(column, not) {
    return `${UNICODE_LOWER}(${column}) ${not ? 'not ' : ''}like ${UNICODE_LOWER}(?) escape '\\'`;
  },

  // BINARY, SQLite's collation of every column: byte order of UTF-8, which is code point order.
  codePointOrder(expression) {
    return expression;
  },

  // A transaction takes the write lock when it begins (sqlite-client.ts): it already excludes
  // every other writer, of this process and of others.
  async lock() {},

  // One writer at a time (the pool has one connection): nothing to order.
  locksRows: false,

  isDeadlock() {
    return false;
  },

  rawRows(result) {
    return Array.isArray(result) ? (result as Record<string, unknown>[]) : [];
  },

  // One writer at a time: a claim is never raced.
  skipLocked: '',

  columnType(type, maxLength) {
    return type === 'float' ? 'real' : commonColumnType(type, maxLength);
  },

  fromDb(type, value) {
    if (value === null || value === undefined) return null;
    if (type === 'bool') return value === 1 || value === true;
    if (JSON_TYPES.has(type)) return parseJson(value);
    return value;
  },

  toDb(type, value) {
    if (value === null || value === undefined) return null;
    if (type === 'bool') return value ? 1 : 0;
    if (JSON_TYPES.has(type)) return JSON.stringify(value);
    return value;
  },

  whereAnyOf(qb, column, values) {
    qb.whereIn(column, values as never[]);
  },

  jsonArrayAnyOf(column, count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    return `exists (select 1 from json_each(${column}) where json_each.value in (${marks}))`;
  },

  jsonArrayLinksLive(column, targetTable, count) {
    const ids = count ? ` and e.value in (${Array.from({ length: count }, () => '?').join(', ')})` : '';
    return `exists (select 1 from json_each(${column}) as e join ${targetTable} as t on t.id = e.value where t.deleted = 0${ids})`;
  },

  async runPrepared(connection, statement, bindings) {
    return runSqliteStatement(connection, statement, bindings);
  },

  // SQLite prepares a statement again by itself when the schema changed.
  isStalePrepared() {
    return false;
  },

  jsonArrayRows(count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    // ORDER BY inside an aggregate needs SQLite 3.44 or later; better-sqlite3 12 bundles a later one.
    return `json_group_array(json_array(${marks}) order by ?)`;
  },

  async introspect(db) {
    const result: Introspection = { tables: new Map(), indexes: new Set(), extensions: new Set() };
    const objects: { type: string; name: string }[] = await db.raw(
      "select type, name from sqlite_master where type in ('table', 'index') and name not like 'sqlite_%'",
    );
    for (const o of objects) {
      if (o.type === 'index') result.indexes.add(o.name);
    }
    for (const o of objects.filter((x) => x.type === 'table')) {
      const columns: { name: string }[] = await db.raw(`pragma table_info("${o.name.replaceAll('"', '""')}")`);
      result.tables.set(o.name, { columns: new Set(columns.map((c) => c.name)) });
    }
    return result;
  },

  async withSchemaLock(db, fn) {
    return db.transaction(fn);
  },

  translateError(error, context) {
    const code = (error as { code?: string } | null)?.code;
    if (typeof code !== 'string') return undefined;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      const message = (error as Error).message;
      const index = /index '([^']+)'/.exec(message)?.[1];
      // `UNIQUE constraint failed: product.brand_id, product.mpn`: the table, then the columns.
      const columns = (/constraint failed: (.+)$/.exec(message)?.[1] ?? '').split(', ');
      const key = index ?? columns.map((c) => c.split('.').pop()).join(',');
      const table = index || !columns[0].includes('.') ? undefined : columns[0].slice(0, columns[0].lastIndexOf('.'));
      return uniqueViolation(context, { key, table }, error);
    }
    // better-sqlite3 reports extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE…).
    if (/^SQLITE_(BUSY|LOCKED|CANTOPEN)/.test(code)) return databaseUnavailable(error);
    return undefined;
  },
};
