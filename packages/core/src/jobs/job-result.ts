import { ApiError } from '../errors';

/** The statuses an item of a job's result has. */
export const ITEM_STATUSES = ['Created', 'Updated', 'NotModified', 'Failed'] as const;

/** One item of a job's result, with its position in the job's input. */
export type ResultItem = Record<string, unknown> & { index: number };

export interface ResultPageQuery {
  offset: number;
  maxSize: number;
  /** Only items of these statuses; all when empty. */
  statuses: readonly string[];
}

/**
 * A job's result as items: an upsert's array as it is; a mass update's `errors` as Failed items.
 * Anything else has no items.
 */
function resultItems(result: unknown): ResultItem[] {
  if (Array.isArray(result)) return result.map((item, index) => ({ ...(item as Record<string, unknown>), index }));
  const errors = (result as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.map((error, index) => ({ status: 'Failed', ...(error as Record<string, unknown>), index }));
}

/** One page of a job's result, filtered by status: `{total, list}`, as lists are. */
export function resultPage(result: unknown, query: ResultPageQuery): { total: number; list: ResultItem[] } {
  const unknown = query.statuses.filter((s) => !(ITEM_STATUSES as readonly string[]).includes(s));
  if (unknown.length) throw new ApiError('CORE_INVALID_QUERY', `status must be one of ${ITEM_STATUSES.join(', ')} (not ${unknown.join(', ')})`);
  const items = resultItems(result).filter((item) => !query.statuses.length || query.statuses.includes(item.status as string));
  return { total: items.length, list: items.slice(query.offset, query.offset + query.maxSize) };
}
