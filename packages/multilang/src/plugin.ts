import { BootError, definePlugin } from '@entity-records/core';
import type { MultilangOptions } from './declarations';
import { languageHook, MultilangIndex } from './language-hook';
import { addVariants, DEFAULT_FIELDS, MULTILANG_ATTRIBUTES } from './variants';

/**
 * Multilingual fields: a field with `isMultilang: true` gets a variant per language of the
 * instance other than the main one (`nameDeDE`), and the `language` header reads records in one
 * language.
 *
 * @example
 * createEntityApi({ languages: ['en_US', 'de_DE'], plugins: [multilang], … })
 * @see docs/reference/multilang.md
 */
export const multilang = definePlugin<MultilangOptions | undefined>({
  name: '@entity-records/multilang',
  setup(api, options) {
    const { languages } = api;
    if (!languages.main) {
      throw new BootError('CORE_CONFIG_INVALID', '@entity-records/multilang needs the instance option languages (main first, e.g. [\'en_US\', \'de_DE\'])');
    }
    api.addDefinitionAttributes(MULTILANG_ATTRIBUTES);
    api.transformDefinitions((definitions) => addVariants(definitions, languages, options?.fields ?? DEFAULT_FIELDS));
    const index = new MultilangIndex();
    api.onEntity((model) => index.add(model));
    api.onPresent('*', languageHook(languages, index));
  },
});
