/** The categories `@entity-records/meta` adds to `_meta`. */
export const META_CATEGORIES = ['permissions', 'options', 'audit'] as const;
export type MetaCategoryName = (typeof META_CATEGORIES)[number];

/** Options of `@entity-records/meta`. */
export interface MetaOptions {
  /** The categories to add; default all: `['permissions', 'options', 'audit']`. */
  categories?: readonly MetaCategoryName[];
}
