import { BootError, definePlugin, type MetaCategory } from '@entity-records/core';
import { auditCategory } from './audit';
import { META_CATEGORIES, type MetaCategoryName, type MetaOptions } from './declarations';
import { optionsCategory } from './options';
import { permissionsCategory } from './permissions';

const CATEGORIES: Record<MetaCategoryName, MetaCategory> = {
  permissions: permissionsCategory,
  options: optionsCategory,
  audit: auditCategory,
};

/**
 * `_meta` on every record of lists, single records, linked records and create / update answers
 * when the request sends `With-Meta: true` (or `1`): `permissions`, `options` and `audit`.
 *
 * @example
 * createEntityApi({ plugins: [meta], … })
 * @see docs/reference/meta.md
 */
export const meta = definePlugin<MetaOptions | undefined>({
  name: '@entity-records/meta',
  setup(api, options) {
    const names = options?.categories ?? META_CATEGORIES;
    for (const name of names) {
      if (!(name in CATEGORIES)) {
        throw new BootError('CORE_CONFIG_INVALID', `@entity-records/meta: unknown category '${String(name)}' (known: ${META_CATEGORIES.join(', ')})`);
      }
      api.addMetaCategory(name, CATEGORIES[name]);
    }
  },
});
