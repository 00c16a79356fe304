import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const knexRequire = createRequire(require.resolve('knex'));

interface SqliteTransactionClass {
  new (...args: unknown[]): { query(conn: unknown, sql: string): Promise<unknown> };
}

/**
 * knex's better-sqlite3 client, with transactions that take the write lock when they begin
 * (`BEGIN IMMEDIATE`). A deferred transaction that reads and then writes fails at once with
 * `SQLITE_BUSY_SNAPSHOT` when another process wrote in between, without waiting; an immediate one
 * waits its turn (`busy_timeout`) and then sees the other's rows. In one process the pool has one
 * connection, so this costs nothing there.
 */
function immediateClient(): typeof Knex.Client {
  const BetterSqlite3Client = knexRequire('./lib/dialects/better-sqlite3') as typeof Knex.Client;
  const SqliteTransaction = knexRequire('./lib/dialects/sqlite3/execution/sqlite-transaction') as SqliteTransactionClass;
  class ImmediateTransaction extends SqliteTransaction {
    begin(conn: unknown): Promise<unknown> {
      return this.query(conn, 'BEGIN IMMEDIATE;');
    }
  }
  return class ImmediateSqliteClient extends BetterSqlite3Client {
    override transaction(container: unknown, config: unknown, outerTx: unknown): Knex.Transaction {
      return new ImmediateTransaction(this, container, config, outerTx) as unknown as Knex.Transaction;
    }
  } as unknown as typeof Knex.Client;
}

let client: typeof Knex.Client | undefined;

/** The knex client class for SQLite files (made once). */
export function sqliteClient(): typeof Knex.Client {
  return (client ??= immediateClient());
}
