import { isLinkField, type EntityModel, type LinkField } from '../definition/model';
import { ApiError } from '../errors';

/** The link field a route names (404 for a name that is no link of the entity type). */
export function linkNamed(model: EntityModel, link: string): LinkField {
  const field = model.field.get(link);
  if (!field || field.system || !isLinkField(field)) {
    throw new ApiError('CORE_NOT_FOUND', `${model.name} has no link '${link}'`, { details: { entity: model.name, link } });
  }
  return field;
}

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
    if (add.length > 1) throw new ApiError('CORE_VALIDATION_FAILED', `${field.name} links one record: give one id`, { details: { issues: [{ path: ['ids'], code: 'too_big', message: `${field.name} takes one id` }] } });
    if (add.length === 1) return add[0];
    return typeof current === 'string' && remove.includes(current) ? null : (current ?? null);
  }
  const ids = new Set([...((current as string[] | null) ?? []), ...add]);
  for (const id of remove) ids.delete(id);
  return [...ids];
}
