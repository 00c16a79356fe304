import { isLinkField, type EntityModel, type LinkField } from '../definition/model';
import { isValidId } from '../definition/validate-record';
import { ApiError, validationFailed } from '../errors';
import type { ChangeAction } from '../sql/change-store';

/**
 * The link field a route names (404 for a name that is no link of the entity type). The system's
 * links (`createdBy`, `modifiedBy`) are read (`reading`), never written through a link route; a
 * write-only link (the actors of a delegated session, `createdByActor`) is never read, as its
 * value never shows.
 */
export function linkNamed(model: EntityModel, link: string, { reading = false }: { reading?: boolean } = {}): LinkField {
  const field = model.field.get(link);
  if (!field || (reading ? field.def.writeOnly : field.system) || !isLinkField(field)) {
    throw new ApiError('CORE_NOT_FOUND', `${model.name} has no link '${link}'`, { details: { entity: model.name, link } });
  }
  return field;
}

/**
 * The ids a link route or `addLinks`/`removeLinks` names for one link: a non-empty list of record
 * ids (400 otherwise, before any record is read), and at most one to add to a single link. An empty
 * list is refused on both routes alike: `{ids: []}` to a link route and `addLinks: {categories: []}`
 * ask the same thing, a link write that names no record, which is a mistake of the client's rather
 * than a change to make. `path` names them in the issue.
 */
export function checkedLinkIds(field: LinkField, { ids, adding, path }: { ids: readonly unknown[]; adding: boolean; path: readonly (string | number)[] }): string[] {
  const where = path.join('.');
  if (ids.length === 0) throw validationFailed(`${where} must be a non-empty list of record ids`, [{ path: [...path], code: 'invalid_format', message: 'ids must be record ids' }]);
  const bad = ids.findIndex((id) => !isValidId(id));
  if (bad >= 0) throw validationFailed(`${where} must be record ids`, [{ path: [...path, bad], code: 'invalid_format', message: 'ids must be record ids' }]);
  if (adding && field.type === 'link' && ids.length > 1) throw tooManyForSingleLink(field, path);
  return ids as string[];
}

const tooManyForSingleLink = (field: LinkField, path: readonly (string | number)[] = ['ids']) =>
  new ApiError('CORE_VALIDATION_FAILED', `${field.name} links one record: give one id`, { details: { issues: [{ path: [...path], code: 'too_big', message: `${field.name} takes one id` }] } });

/** Ids added to or removed from one link of a record (link routes, `addLinks`/`removeLinks`). */
export interface LinkDelta {
  field: LinkField;
  add?: readonly string[];
  remove?: readonly string[];
}

/**
 * The value a link holds after a delta: a multiple link's ids with those added (in order, once) and
 * without those removed; a single link set to the one id added, or cleared when it held one removed.
 */
export function nextLinkValue({ field, add = [], remove = [] }: LinkDelta, current: unknown): unknown {
  if (field.type === 'link') {
    if (add.length > 1) throw tooManyForSingleLink(field);
    if (add.length === 1) return add[0];
    return typeof current === 'string' && remove.includes(current) ? null : (current ?? null);
  }
  const ids = new Set([...((current as string[] | null) ?? []), ...add]);
  for (const id of remove) ids.delete(id);
  return [...ids];
}

/** The values of the links some deltas change, from the values the record holds now (by field key). */
export function linkValuesAfter(deltas: readonly LinkDelta[], current: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(deltas.map((d) => [d.field.key, nextLinkValue(d, current[d.field.key])]));
}

/** What the link rules judge of deltas: the ids they add (removing needs no right on the target). */
export const addedLinks = (deltas: readonly LinkDelta[]): [LinkField, readonly string[]][] => deltas.map((d) => [d.field, d.add ?? []]);

/**
 * The action a write is logged as, from what it changed (`diff`, by field key) and the links it
 * names by delta (link routes, `addLinks`/`removeLinks`): `Relate` when it only linked records
 * (a single link set to another record, or ids added to a multiple link), `Unrelate` when it only
 * unlinked them (a single link cleared, ids removed), else `Update`, as is any write that changed
 * another field too. What the write named but left as it was (a value sent unchanged, an id already
 * linked) does not count: the action tells what the change did.
 */
export function changeAction(deltas: readonly LinkDelta[], diff: Readonly<Record<string, { was: unknown; became: unknown }>>): ChangeAction {
  if (deltas.length === 0) return 'Update';
  const links = new Map(deltas.map((d) => [d.field.key, d.field]));
  let related = false;
  let unrelated = false;
  for (const [key, { was, became }] of Object.entries(diff)) {
    const field = links.get(key);
    if (!field) return 'Update';
    if (field.type === 'link') {
      if (became === null || became === undefined) unrelated = true;
      else related = true;
      continue;
    }
    const before = (was as readonly unknown[] | null) ?? [];
    const after = (became as readonly unknown[] | null) ?? [];
    related ||= after.some((id) => !before.includes(id));
    unrelated ||= before.some((id) => !after.includes(id));
  }
  if (related && !unrelated) return 'Relate';
  if (unrelated && !related) return 'Unrelate';
  return 'Update';
}
