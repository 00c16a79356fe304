import type { Database, Transaction } from './database';

/** Runs `fn` in a transaction of the pool: committed when it resolves, rolled back when it throws. */
export function inTransaction<TResult>(database: Database, fn: (trx: Transaction) => Promise<TResult>): Promise<TResult> {
  return database.knex.transaction(fn);
}

/**
 * Runs `fn` in a savepoint of `trx`: when it throws, only its own statements are undone and the
 * transaction goes on (PostgreSQL would otherwise refuse every later statement of it).
 */
export function savepoint<TResult>(trx: Transaction, fn: (sp: Transaction) => Promise<TResult>): Promise<TResult> {
  return trx.transaction(fn);
}
