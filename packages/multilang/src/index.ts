import { multilang } from './plugin';

declare module '@entity-records/core' {
  interface FieldAttributes {
    /**
     * `varchar` and `text`: the field gets a variant per language of the instance other than the
     * main one (`name` → `nameDeDE`). `required` and `unique` apply to the main value only.
     */
    isMultilang?: boolean;
    /** Set on the variants the plugin adds: the multilingual field they belong to. */
    multilangField?: string;
    /** Set on the variants the plugin adds: their language code. */
    multilangLocale?: string;
  }
}

export { multilang };
export type { MultilangOptions } from './declarations';
export { MULTILANG_ATTRIBUTES, MULTILANG_TYPES } from './variants';
export default multilang;
