import type { DefinedEntity, EntityDefinition, StrictDefinition } from '../declarations';

/**
 * Declares an entity type. The definition is returned as it is, typed, so that
 * `InferRecord<typeof Product>` gives the record type without writing it twice.
 *
 * @example
 * const Brand = defineEntity({ name: 'Brand', fields: { name: { type: 'varchar', required: true, unique: true } } })
 * type BrandRecord = InferRecord<typeof Brand> // { id: string; name: string; ... }
 * // An option core and the plugins do not declare is a compile error: `requird: true` → "'requird' is not a field option".
 * @see docs/reference/entities.md
 */
export function defineEntity<const $Definition extends EntityDefinition>(
  definition: $Definition & StrictDefinition<$Definition>,
): DefinedEntity<$Definition> {
  return definition;
}
