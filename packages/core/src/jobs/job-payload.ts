/**
 * A job's payload is stored as JSON, which has no Infinity: `JSON.stringify` writes null for it.
 * A body parsed from JSON holds one wherever a number is beyond the range of a double (`1e400`,
 * `-1e400`), and the write it asks for refuses that value ('must be a finite number'). Stored as
 * null, the same value would be another write in a job: `upsertAsync` of `{price: 1e400}` cleared
 * the price that `upsert` refuses to touch, and `{name: 1e400}` failed as a missing name instead of
 * a value of the wrong type. So the places of such numbers are stored beside the payload, under a
 * key no body reaches (the payloads of core's jobs are built from known keys), and put back when the
 * job runs: the job judges the very values the request carried.
 */
const NON_FINITE_KEY = '$nonFinite';

type Path = (string | number)[];
type Mark = [Path, 'Infinity' | '-Infinity' | 'NaN'];

/**
 * The places of the numbers JSON cannot hold in `payload`. One path is kept and copied only where
 * such a number is: the payload of an `upsertAsync` may hold a million values, and a copy of the
 * path for each would cost the event loop far more than the walk. Bodies are at most 64 levels
 * deep (CONTRACT §17), so the walk recurses.
 */
function nonFiniteNumbers(payload: Record<string, unknown>): Mark[] {
  const marks: Mark[] = [];
  const path: Path = [];
  const walk = (node: unknown): void => {
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) marks.push([[...path], String(node) as Mark[1]]);
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        path.push(i);
        walk(node[i]);
        path.pop();
      }
    } else if (node !== null && typeof node === 'object') {
      for (const key in node) {
        if (!Object.hasOwn(node, key)) continue;
        path.push(key);
        walk((node as Record<string, unknown>)[key]);
        path.pop();
      }
    }
  };
  walk(payload);
  return marks;
}

/** The payload as it is stored: with the places of its numbers JSON cannot hold, when it has any. */
export function storedPayload(payload: Record<string, unknown>): Record<string, unknown> {
  const marks = nonFiniteNumbers(payload);
  return marks.length > 0 ? { ...payload, [NON_FINITE_KEY]: marks } : payload;
}

const isMark = (mark: unknown): mark is Mark =>
  Array.isArray(mark) &&
  Array.isArray(mark[0]) &&
  mark[0].length > 0 &&
  (mark[0] as unknown[]).every((key) => typeof key === 'string' || typeof key === 'number') &&
  ['Infinity', '-Infinity', 'NaN'].includes(mark[1] as string);

/** The payload a stored one was made from: its numbers JSON cannot hold put back in their places. */
export function readPayload(stored: Record<string, unknown>): Record<string, unknown> {
  const marks = stored[NON_FINITE_KEY];
  if (!Array.isArray(marks) || !marks.every(isMark)) return stored;
  const { [NON_FINITE_KEY]: _marks, ...payload } = stored;
  // Only places the payload holds are written: own keys, down to one that JSON stored as null.
  const own = (node: unknown, key: string | number): node is Record<string | number, unknown> => node !== null && typeof node === 'object' && Object.hasOwn(node, key);
  for (const [path, value] of marks) {
    let parent: unknown = payload;
    for (const key of path.slice(0, -1)) parent = own(parent, key) ? parent[key] : undefined;
    const last = path[path.length - 1];
    if (own(parent, last) && parent[last] === null) parent[last] = Number(value);
  }
  return payload;
}
