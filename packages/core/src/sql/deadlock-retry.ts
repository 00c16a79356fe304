import type { Dialect } from './dialects/dialect';

/** Tries of work whose transaction the database ended to break a deadlock. */
const DEADLOCK_ATTEMPTS = 5;

/**
 * Runs a transaction's work again when the database broke a deadlock by ending it (nothing of it
 * is stored, so it can be decided afresh), after a short random pause. An upsert locks the rows
 * it updates in id order, but two of them inserting the same new keys in opposite orders can
 * still wait for each other.
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
