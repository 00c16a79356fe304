import type { UserAccess } from '../auth/access-control';
import type { ApiRecord } from '../declarations';
import { namesOf, type ShowsField } from '../sql/read-query';
import type { Repository } from './repository';

/**
 * `<link>Name` and `<link>Names` as the reader may see them (CONTRACT §4: a field the role may not
 * read is left out of every answer). A linked record is named by the first set of its name, code
 * and user name, else its id; a field the reader may not see through a link
 * (`UserAccess.readsThroughLink`) names no record, the next one does (as a list sorted by the
 * link orders it: `sortColumn`). The page's own query names linked records by every such field:
 * the records of a link whose target the reader may not name so are named again, one query per
 * link. A reader who may see every name (nearly every one) costs nothing.
 */
export async function nameLinksFor(repo: Repository, reader: UserAccess, records: readonly ApiRecord[]): Promise<void> {
  if (reader.unrestricted || records.length === 0) return;
  const links = repo.guard.linksNamedOtherwise(reader);
  if (links.size === 0) return;
  const shows: ShowsField = (entity, field) => reader.readsThroughLink(entity, field);
  for (const [field, target] of links) {
    const single = field.type === 'link';
    const key = single ? `${field.name}Name` : `${field.name}Names`;
    const shown = records.filter((record) => Object.hasOwn(record, key));
    const ids = new Set<string>();
    for (const record of shown) {
      if (!single) for (const id of Object.keys(namesIn(record, key))) ids.add(id);
      else if (typeof record[field.key] === 'string') ids.add(record[field.key] as string);
    }
    if (ids.size === 0) continue;
    const names = await namesOf(repo.sql, target, { ids: [...ids], shows });
    for (const record of shown) {
      if (single) {
        record[key] = names.get(record[field.key] as string) ?? null;
        continue;
      }
      const byId = namesIn(record, key);
      for (const id of Object.keys(byId)) byId[id] = names.get(id) ?? null;
    }
  }
}

/** The names of a multiple link in a record (an object id → name; empty when none). */
const namesIn = (record: ApiRecord, key: string) => (record[key] ?? {}) as Record<string, string | null>;
