import type { Dialect } from './dialects/dialect';

/** Tries of work whose transaction the database ended to break a deadlock. */
const DEADLOCK_ATTEMPTS = 5;

/**
 * Runs a transaction's work again when the database broke a deadlock by ending it (nothing of it
 * is stored, so it can be decided afresh), after a short random pause. Upserts of the same
 * records in opposite orders can wait for each other: the rows an update statement writes are
 * locked in the order its plan visits them, and inserts of the same new keys wait on each other's
 * keys. The caller's next try may lock what it reads in id order.
 */
export async function againAfterDeadlock<TResult>(dialect: Dialect, work: () => Promise<TResult>): Promise<TResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= DEADLOCK_ATTEMPTS || !dialect.isDeadlock(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}
