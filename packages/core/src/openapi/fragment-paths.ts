import type { OpenApiFragment } from '../plugin';
import { responseRef } from './error-responses';
import type { Operation, OperationId, PathItem } from './refs';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The operations of a plugin path item with their ids made generation-specific and responses guaranteed. */
function fragmentPathItem(path: string, item: PathItem, op: OperationId): PathItem {
  const complete = (method: string, operation: Operation): Operation => {
    const given = typeof operation.operationId === 'string' && operation.operationId !== '' ? operation.operationId : undefined;
    const derived = `${method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`;
    return {
      ...operation,
      operationId: op(given ?? derived),
      responses: operation.responses ?? { default: responseRef('Error') },
    };
  };
  return Object.fromEntries(
    Object.entries(item).map(([key, value]) =>
      (HTTP_METHODS as readonly string[]).includes(key) && value && typeof value === 'object' ? [key, complete(key, value as Operation)] : [key, value],
    ),
  );
}

/**
 * Adds the paths of plugin fragments to the paths of one generation. They come last and replace
 * an operation of the same path and method, as plugin routes are mounted before the record routes.
 */
export function addFragmentPaths(paths: Record<string, PathItem>, fragments: readonly OpenApiFragment[], op: OperationId): void {
  for (const fragment of fragments) {
    for (const [path, item] of Object.entries(fragment.paths ?? {})) {
      if (!item || typeof item !== 'object') continue;
      const relative = path.startsWith('/') ? path : `/${path}`;
      paths[relative] = { ...paths[relative], ...fragmentPathItem(relative, item as PathItem, op) };
    }
  }
}
