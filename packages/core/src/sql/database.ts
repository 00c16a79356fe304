import fs from 'node:fs';
import path from 'node:path';
import knex, { type Knex } from 'knex';
import { BootError } from '../errors';
import type { Dialect } from './dialects/dialect';
import { postgresDialect } from './dialects/postgres';
import { sqliteDialect } from './dialects/sqlite';

/** Query types for layers that pass queries and transactions along without building SQL. */
export type Transaction = Knex.Transaction;
export type QueryBuilder = Knex.QueryBuilder;
export type SqlExpression = Knex.Raw;
/** The connection pool or a transaction. */
export type Connection = Knex | Knex.Transaction;

export interface Database {
  knex: Knex;
  dialect: Dialect;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `sqlite::memory:`, `sqlite:<path>` (also `sqlite://<path>`), a bare file path, or `postgres://…`. */
  url: string;
  /** PostgreSQL pool size; default 10. */
  poolSize?: number;
  /** PostgreSQL: the longest a statement may run, in ms; default 30,000; 0 = no limit. */
  statementTimeoutMs?: number;
  /** How long a query waits for a free connection, in ms; default 10,000. */
  poolTimeoutMs?: number;
}

const DIALECTS = Object.freeze({ sqlite: sqliteDialect, postgres: postgresDialect });

/** OIDs whose text form we keep as it is: date, timestamp, timestamptz; int8 and numeric become numbers. */
const RAW_TEXT_OIDS = new Set([1082, 1114, 1184]);
const NUMBER_OIDS = new Set([20, 1700]);

function pgTypes() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pgTypesModule = require('pg').types as { getTypeParser: (oid: number, format?: string) => unknown };
  return {
    getTypeParser(oid: number, format?: string) {
      if (RAW_TEXT_OIDS.has(oid)) return (value: string) => value;
      if (NUMBER_OIDS.has(oid)) return (value: string) => Number(value);
      return pgTypesModule.getTypeParser(oid, format);
    },
  };
}

function sqliteConfig(file: string): Knex.Config {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  return {
    client: 'better-sqlite3',
    connection: { filename: file },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        if (file !== ':memory:') conn.pragma('journal_mode = WAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 5000');
        conn.pragma('synchronous = NORMAL');
        done(null, conn);
      },
    },
  };
}

/** Opens a database from a URL; the dialect object is chosen here and nowhere else. */
export function openDatabase(options: DatabaseOptions): Database {
  const { url } = options;
  let config: Knex.Config;
  let dialect: Dialect;
  if (/^postgres(ql)?:\/\//.test(url)) {
    dialect = DIALECTS.postgres;
    config = {
      client: 'pg',
      // The server cancels a statement past the timeout (SQLSTATE 57014); set per connection.
      connection: { connectionString: url, types: pgTypes(), statement_timeout: options.statementTimeoutMs ?? 30_000 } as Knex.PgConnectionConfig,
      pool: { min: 0, max: options.poolSize ?? 10 },
    };
  } else if (url.startsWith('sqlite:') || !url.includes('://')) {
    dialect = DIALECTS.sqlite;
    // `sqlite:data/x.db`, `sqlite:/abs/x.db`, `sqlite://data/x.db` and `sqlite:///abs/x.db` all name a file.
    const file = url.replace(/^sqlite:(\/\/)?/, '');
    if (!file) throw new BootError('CORE_CONFIG_INVALID', `database URL '${url}' names no file`);
    config = sqliteConfig(file);
  } else {
    throw new BootError('CORE_CONFIG_INVALID', `unsupported database URL '${url.replace(/\/\/[^@]*@/, '//***@')}'`);
  }
  const db = knex({ ...config, acquireConnectionTimeout: options.poolTimeoutMs ?? 10_000 });
  return { knex: db, dialect, close: () => db.destroy() };
}
