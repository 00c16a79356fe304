import type { Knex } from 'knex';
import type { Database, Transaction } from './database';
import { againAfterDeadlock } from './deadlock-retry';

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

/** What to run once a transaction commits, per transaction (or savepoint). */
const committed = new WeakMap<object, (() => void)[]>();

/**
 * Runs `fn` once what was written on `db` is committed: at once on the pool, at commit in a
 * transaction (never when it rolls back). For work that must not see, or tell others of, a write
 * that may still be undone: dropping a cache, waking a worker.
 */
export function afterCommit(db: Knex | Knex.Transaction, fn: () => void): void {
  if (!(db as Knex.Transaction).isTransaction) return fn();
  const list = committed.get(db) ?? [];
  list.push(fn);
  committed.set(db, list);
}

/** Runs `fn` in a transaction of `knex`: committed when it resolves, rolled back when it throws; then what waits for its commit. */
export async function transactionOn<TResult>(knex: Knex, fn: (trx: Transaction) => Promise<TResult>): Promise<TResult> {
  let logged = false;
  let after: (() => void)[] = [];
  const result = await knex.transaction(async (trx) => {
    const value = await fn(trx);
    logged = logging.has(trx);
    after = committed.get(trx) ?? [];
    return value;
  });
  if (logged) announcers.get(knex)?.();
  for (const run of after) run();
  return result;
}

/** Runs `fn` in a transaction of the pool: committed when it resolves, rolled back when it throws. */
export function inTransaction<TResult>(database: Database, fn: (trx: Transaction) => Promise<TResult>): Promise<TResult> {
  return transactionOn(database.knex, fn);
}

/**
 * Runs `fn` in a transaction of the pool, and again (a few times, after a short random pause) when
 * the database ended it to break a deadlock: nothing of it was stored. Writes lock the rows of the
 * records they link and count up their versions; two writes of other records can still lock some
 * of the same rows in other orders. Only for work that changes nothing outside its transaction, or
 * sets what it changes afresh on every run.
 */
export function inTransactionAgain<TResult>(database: Database, fn: (trx: Transaction) => Promise<TResult>): Promise<TResult> {
  return againAfterDeadlock(database.dialect, () => transactionOn(database.knex, fn));
}

/**
 * Runs `fn` in a savepoint of `trx`: when it throws, only its own statements are undone and the
 * transaction goes on (PostgreSQL would otherwise refuse every later statement of it). What the
 * savepoint logged, and what waits for its commit, passes to `trx` once it is released.
 */
export async function savepoint<TResult>(trx: Transaction, fn: (sp: Transaction) => Promise<TResult>): Promise<TResult> {
  let inner: Transaction | undefined;
  const result = await trx.transaction((sp) => {
    inner = sp;
    return fn(sp);
  });
  if (inner && logging.has(inner)) logging.add(trx);
  for (const run of (inner && committed.get(inner)) ?? []) afterCommit(trx, run);
  return result;
}
