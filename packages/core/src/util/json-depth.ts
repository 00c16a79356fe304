/** How deep any JSON a client sends may nest: bodies, and so the payloads of the jobs they start. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a parsed JSON value nests objects and arrays deeper than `limit` levels (a top-level
 * object or array is level 1). Walked with an explicit stack: the recursion of later steps
 * (validation, `JSON.stringify` when a job is stored) would overflow the call stack on a value a
 * few thousand levels deep, and this check must not.
 */
export function nestsDeeper(value: unknown, limit: number): boolean {
  const stack: { node: object; depth: number }[] = [];
  if (value !== null && typeof value === 'object') stack.push({ node: value, depth: 1 });
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: object; depth: number };
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

/** A place in a parsed JSON value: its key or index, and the place of its parent. */
interface Place {
  node: unknown;
  key?: string | number;
  parent?: Place;
  /** The place is a key of an object, `node` its text: walked as a value, never descended into. */
  isKey?: boolean;
}

const pathTo = (place: Place): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let p: Place | undefined = place; p?.key !== undefined; p = p.parent) path.unshift(p.key);
  return path;
};

/**
 * The path to the first text of a parsed JSON value, in document order, that `bad` holds true of:
 * a string value, or a key (then the path ends at that key). Undefined when there is none. Walked
 * with an explicit stack, as `nestsDeeper`, in time linear in the value however deep it nests.
 */
export function pathOfText(value: unknown, bad: (text: string) => boolean): (string | number)[] | undefined {
  const stack: Place[] = [{ node: value }];
  while (stack.length > 0) {
    const place = stack.pop() as Place;
    const { node } = place;
    if (typeof node === 'string') {
      if (bad(node)) return pathTo(place);
      continue;
    }
    if (place.isKey || node === null || typeof node !== 'object') continue;
    const children: Place[] = [];
    if (Array.isArray(node)) node.forEach((child, i) => children.push({ node: child, key: i, parent: place }));
    else {
      for (const [key, child] of Object.entries(node)) children.push({ node: key, key, parent: place, isKey: true }, { node: child, key, parent: place });
    }
    // Reversed, so that the first child is taken first.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return undefined;
}
