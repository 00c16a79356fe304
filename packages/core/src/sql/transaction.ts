import type { Knex } from 'knex';
import type { Database, Transaction } from './database';

/** What to call once changes are committed, per database (the change feed of its instance). */
const announcers = new WeakMap<Knex, () => void>();
/** Transactions that logged changes: their commit is announced. */
const logging = new WeakSet<object>();

/** Calls `announce` after every commit that logged changes on this database. */
export function onChangesCommitted(database: Database, announce: () => void): void {
  announcers.set(database.knex, announce);
}

/** Notes that changes were written on `db`: announced at once on the pool, at commit in a transaction. */
export function changesWritten(db: Knex | Knex.Transaction, root?: Knex): void {
  if ((db as Knex.Transaction).isTransaction) logging.add(db);
  else announcers.get(root ?? (db as Knex))?.();
}

/** Runs `fn` in a transaction of the pool: committed when it resolves, rolled back when it throws. */
export async function inTransaction<TResult>(database: Database, fn: (trx: Transaction) => Promise<TResult>): Promise<TResult> {
  let logged = false;
  const result = await database.knex.transaction(async (trx) => {
    const value = await fn(trx);
    logged = logging.has(trx);
    return value;
  });
  if (logged) announcers.get(database.knex)?.();
  return result;
}

/**
 * Runs `fn` in a savepoint of `trx`: when it throws, only its own statements are undone and the
 * transaction goes on (PostgreSQL would otherwise refuse every later statement of it).
 */
export function savepoint<TResult>(trx: Transaction, fn: (sp: Transaction) => Promise<TResult>): Promise<TResult> {
  return trx.transaction(fn);
}
