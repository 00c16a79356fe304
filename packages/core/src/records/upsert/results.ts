import type { RequestContext } from '../../context';
import type { ApiRecord } from '../../declarations';
import { linkScopes } from '../link-scopes';
import type { Repository } from '../repository';

/** What an upsert result shows of a record (CONTRACT §6: stored fields, no link names, no attributes). */

/**
 * The keys of a stored record an upsert result shows: stored fields the caller may read (no link
 * names, no attributes). A one-to-many list shows only to a caller who sees every record it lists
 * (it is not the record's own value: see `linkScopes`).
 */
export async function shownKeys(repo: Repository, ctx: RequestContext): Promise<string[]> {
  const access = await repo.guard.access(ctx);
  const readable = repo.readable.filter((f) => repo.guard.canRead(access, f));
  const scoped = await linkScopes(repo, ctx, readable);
  return readable.filter((f) => !scoped?.has(f)).map((f) => f.key);
}

export function entityOf(keys: readonly string[], record: Record<string, unknown>): ApiRecord {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (key in record) out[key] = record[key] ?? null;
  return out as ApiRecord;
}
