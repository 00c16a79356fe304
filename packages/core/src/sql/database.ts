import knex, { type Knex } from 'knex';
import { BootError } from '../errors';
import type { Dialect } from './dialects/dialect';
import { postgresDialect } from './dialects/postgres';
import { sqliteDialect } from './dialects/sqlite';
import type { PreparedStatement } from './prepared';
import { ShapeCache } from '../util/shape-cache';

/** Query types for layers that pass queries and transactions along without building SQL. */
export type Transaction = Knex.Transaction;
export type QueryBuilder = Knex.QueryBuilder;
export type SqlExpression = Knex.Raw;
/** The connection pool or a transaction. */
export type Connection = Knex | Knex.Transaction;

export interface Database {
  knex: Knex;
  dialect: Dialect;
  /** Statements compiled once (see `prepared.ts`), by the shape of their query. */
  statements: ShapeCache<PreparedStatement>;
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

/** Statement shapes an instance keeps compiled (a few per entity type, more with the selects clients choose). */
const STATEMENT_SHAPES = 2000;

const DIALECTS: readonly Dialect[] = Object.freeze([postgresDialect, sqliteDialect]);

/** Opens a database from a URL; the dialect that serves the URL is chosen here and nowhere else. */
export function openDatabase(options: DatabaseOptions): Database {
  for (const dialect of DIALECTS) {
    const config = dialect.connect(options);
    if (!config) continue;
    const db = knex({ ...config, acquireConnectionTimeout: options.poolTimeoutMs ?? 10_000 });
    return { knex: db, dialect, statements: new ShapeCache(STATEMENT_SHAPES), close: () => db.destroy() };
  }
  throw new BootError('CORE_CONFIG_INVALID', `unsupported database URL '${options.url.replace(/\/\/[^@]*@/, '//***@')}'`);
}
