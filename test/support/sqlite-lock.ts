import type BetterSqlite3 from 'better-sqlite3';

/** A write lock another connection holds for a while (see `holdWriteLock`). */
export interface HeldLock {
  /** Whether the other connection has committed. */
  released(): boolean;
  /** How many times a 10 ms timer fired meanwhile: none while something blocks the process. */
  turns(): number;
  /** Stops the timers (the lock stays released or held as it is). */
  stop(): void;
}

/**
 * Holds SQLite's write lock on `other`, a connection of its own to the file, with what `write`
 * wrote in its transaction, and commits after `ms`; meanwhile counts turns of the event loop.
 */
export function holdWriteLock(other: BetterSqlite3.Database, { ms, write }: { ms: number; write: (db: BetterSqlite3.Database) => void }): HeldLock {
  other.exec('BEGIN IMMEDIATE');
  write(other);
  let turns = 0;
  let released = false;
  const ticker = setInterval(() => turns++, 10);
  const release = setTimeout(() => {
    other.exec('COMMIT');
    released = true;
  }, ms);
  return {
    released: () => released,
    turns: () => turns,
    stop() {
      clearInterval(ticker);
      clearTimeout(release);
    },
  };
}
