/** How many items of a job were created, updated, left as they were, or failed: what a UI polls. */
export interface JobCounts {
  created: number;
  updated: number;
  notModified: number;
  failed: number;
}

const KEY_OF_STATUS: Record<string, keyof JobCounts> = { Created: 'created', Updated: 'updated', NotModified: 'notModified', Failed: 'failed' };

/**
 * The counts of a (partial) result: an array of upsert-like items `{status}` is tallied by
 * status; a mass update's `{updated, errors}` gives `updated` and `failed`; anything else counts nothing.
 */
export function jobCounts(result: unknown): JobCounts {
  const counts: JobCounts = { created: 0, updated: 0, notModified: 0, failed: 0 };
  if (Array.isArray(result)) {
    for (const item of result) {
      const key = KEY_OF_STATUS[(item as { status?: unknown } | null)?.status as string];
      if (key) counts[key] += 1;
    }
    return counts;
  }
  const { updated, errors } = (result ?? {}) as { updated?: unknown; errors?: unknown };
  if (typeof updated === 'number') counts.updated = updated;
  if (Array.isArray(errors)) counts.failed = errors.length;
  return counts;
}
