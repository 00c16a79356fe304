import { liveIds } from '../../sql/record-store';
import { sqlContext } from '../../sql/sql-context';
import type { Repository } from '../repository';

/** The id a record an item creates gets, by the item's position; undefined: a new random one. */
export type NewIds = (index: number) => string | undefined;

/** What `newIdOf` needs to know of an item. */
interface ItemIds {
  repo: Repository;
  body: Record<string, unknown>;
  index: number;
}

/**
 * The id the record an item creates gets: the payload's `id` when it has one (the client's
 * choice, judged as such), else the one `newIds` gives (not for entity types whose ids the server
 * makes at random).
 */
export function newIdOf(newIds: NewIds | undefined, { repo, body, index }: ItemIds): string | undefined {
  if (!newIds || (body.id !== undefined && body.id !== null) || repo.model.def.serverIds) return undefined;
  return newIds(index);
}

/**
 * The items whose record exists already under the id `newIds` gives them: records an earlier run
 * of the same items created (a job whose process died after writing them, before saving how far it
 * got). Such an item is run again as an update of that record, so nothing is created twice. One
 * query per entity type; answers position → id.
 */
export async function createdBefore(
  lookup: (entity: string) => Repository | undefined,
  { items, newIds }: { items: readonly unknown[]; newIds: NewIds },
): Promise<Map<number, string>> {
  const wanted = new Map<Repository, Map<string, number>>();
  items.forEach((item, index) => {
    const { entity, payload } = (item ?? {}) as { entity?: unknown; payload?: unknown };
    const repo = typeof entity === 'string' ? lookup(entity) : undefined;
    if (!repo || typeof payload !== 'object' || payload === null || Array.isArray(payload)) return;
    const id = newIdOf(newIds, { repo, body: payload as Record<string, unknown>, index });
    if (id === undefined) return;
    if (!wanted.has(repo)) wanted.set(repo, new Map());
    wanted.get(repo)?.set(id, index);
  });
  const found = new Map<number, string>();
  for (const [repo, ids] of wanted) {
    const sql = sqlContext(repo.env, repo.env.database.knex);
    for (const id of await liveIds(sql, repo.model, [...ids.keys()])) found.set(ids.get(id) as number, id);
  }
  return found;
}
