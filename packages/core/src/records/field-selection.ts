import type { EntityModel, FieldModel } from '../definition/normalize';
import type { Repository } from './repository';
import { invalidQuery } from '../sql/where-values';

/** A field by name or record key; `<link>Name` / `<link>Names` name their link. */
function fieldByName(model: EntityModel, name: string): FieldModel | undefined {
  const direct = model.byKey.get(name) ?? model.field.get(name);
  if (direct) return direct;
  const link = /^(.+?)(Name|Names)$/.exec(name);
  const field = link ? model.field.get(link[1]) : undefined;
  if (field?.type === 'link' && link?.[2] === 'Name') return field;
  if (field?.type === 'linkMultiple' && link?.[2] === 'Names') return field;
  return undefined;
}

/**
 * Resolves `select` names (`name`, `brand`, `brandId`, `brandName`) to fields; `id` is always in.
 * A key a present hook adds to every record (a Sharing's `deleted`) may be named too: it is there
 * anyway.
 */
export function selectFields(repo: Repository, select: readonly string[] | undefined): FieldModel[] {
  if (!select || select.length === 0) return repo.readable;
  const chosen = new Set<FieldModel>([repo.model.field.get('id') as FieldModel]);
  for (const name of select) {
    const field = fieldByName(repo.model, name);
    if (!field && Object.hasOwn(repo.env.presenter.addedKeys(repo.model.name), name)) continue;
    if (!field || field.def.writeOnly) throw invalidQuery(`Unknown field '${name}' in select for ${repo.model.name}`, { field: name });
    chosen.add(field);
  }
  return repo.readable.filter((f) => chosen.has(f));
}

/** The field `sortBy` names (`id` when none); 400 for one that cannot be sorted by. */
export function sortField(model: EntityModel, sortBy: string | undefined): FieldModel {
  if (sortBy === undefined || sortBy === '') return model.field.get('id') as FieldModel;
  const field = fieldByName(model, sortBy);
  if (field?.def.computed) throw invalidQuery(`Field '${field.name}' is computed for each answer; it cannot be sorted by`, { field: sortBy });
  if (!field || !field.column || field.def.writeOnly || field.type === 'jsonObject' || field.type === 'multiEnum') {
    throw invalidQuery(`Cannot sort ${model.name} by '${sortBy}'`, { field: sortBy });
  }
  return field;
}
