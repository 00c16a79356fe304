/** How long long-running work keeps the event loop before it lets other requests in. */
const SLICE_MS = 20;

/**
 * A function to await between the steps of long work (the items of an upsert, the records of a
 * mass update): it gives the event loop a turn once the steps since the last turn took `sliceMs`.
 * SQLite's driver is synchronous, and a chain of its queries resolves without ever returning to
 * the event loop: without these turns, one large upsert kept every other request (even a health
 * check) waiting until it ended.
 */
export function eventLoopTurns(sliceMs = SLICE_MS): () => Promise<void> {
  let since = Date.now();
  return async () => {
    if (Date.now() - since < sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = Date.now();
  };
}
