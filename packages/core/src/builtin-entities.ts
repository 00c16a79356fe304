import { defineEntity } from './definition/define-entity';
import { keepLink } from './definition/fixed-link';

/** A named list of options (`product_status`, `product_tags`). */
export const ExtensibleEnumEntity = defineEntity({
  name: 'ExtensibleEnum',
  fields: {
    code: { type: 'varchar', required: true, unique: true, maxLength: 100 },
    name: { type: 'varchar', required: true },
    options: {
      type: 'linkMultiple',
      entity: 'ExtensibleEnumOption',
      foreign: 'extensibleEnum',
      readOnly: true,
      description: 'The options of the list. Read-only: an option is created in its list (extensibleEnumId) and stays there.',
    },
  },
});

/** One option of a list; its code is unique within its list. */
export const ExtensibleEnumOptionEntity = defineEntity({
  name: 'ExtensibleEnumOption',
  fields: {
    code: { type: 'varchar', required: true, maxLength: 100 },
    name: { type: 'varchar' },
    color: { type: 'varchar', maxLength: 32 },
    sortOrder: { type: 'int' },
    extensibleEnum: { type: 'link', entity: 'ExtensibleEnum', required: true, description: 'The list of the option. Fixed once created.' },
  },
  uniqueIndexes: { list_code: ['extensibleEnum', 'code'] },
  hooks: { beforeUpdate: keepLink('extensibleEnum') },
});
