import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const knexRequire = createRequire(require.resolve('knex'));

/** What of better-sqlite3's connection taking the write lock needs. */
interface RawConnection {
  exec(sql: string): unknown;
  pragma(sql: string): unknown;
  __knexUid?: string;
}

interface SqliteTransactionClass {
  new (...args: unknown[]): { txid: string; trxClient: { emit(event: 'query', query: object): unknown } };
}

/** How long a transaction waits for another connection's write lock before it answers 503. */
const WRITE_LOCK_WAIT_MS = 5000;

/** The busy timeout of single statements outside a transaction (waited synchronously by the driver). */
export const STATEMENT_BUSY_MS = 5000;

const isBusy = (error: unknown) => /^SQLITE_BUSY/.test(String((error as { code?: unknown } | null)?.code ?? ''));

/**
 * Begins a transaction that holds the write lock (`BEGIN IMMEDIATE`). While another connection
 * holds it, waits in turns of the event loop (the driver's own busy wait would block the whole
 * process, the connection that holds the lock included when it is of this process).
 */
async function beginImmediate(conn: RawConnection): Promise<void> {
  const deadline = Date.now() + WRITE_LOCK_WAIT_MS;
  conn.pragma('busy_timeout = 0');
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        conn.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 25)));
    }
  } finally {
    conn.pragma(`busy_timeout = ${STATEMENT_BUSY_MS}`);
  }
}

/**
 * knex's better-sqlite3 client, with transactions that take the write lock when they begin. A
 * deferred transaction (SQLite's default, and knex's) that reads and then writes fails at once
 * with `SQLITE_BUSY_SNAPSHOT` when another connection wrote in between; an immediate one waits
 * its turn and then reads what the other wrote. In one process the pool has one connection, so
 * the lock is free whenever a transaction begins.
 */
function immediateClient(): typeof Knex.Client {
  const BetterSqlite3Client = knexRequire('./lib/dialects/better-sqlite3') as typeof Knex.Client;
  const SqliteTransaction = knexRequire('./lib/dialects/sqlite3/execution/sqlite-transaction') as SqliteTransactionClass;
  class ImmediateTransaction extends SqliteTransaction {
    async begin(conn: RawConnection): Promise<void> {
      await beginImmediate(conn);
      // Told like any statement of the transaction (query logs, statement counts).
      this.trxClient.emit('query', { sql: 'BEGIN IMMEDIATE;', bindings: [], __knexUid: conn.__knexUid, __knexTxId: this.txid });
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
