/** Options of `@entity-records/multilang`. */
export interface MultilangOptions {
  /**
   * Fields of entity types the host does not define itself (core's, other plugins') to make
   * multilingual, by entity type. Default `{ExtensibleEnumOption: ['name']}`; a value given
   * replaces the default (`{}` makes none).
   */
  fields?: Record<string, readonly string[]>;
}
