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
