import { defineEntity } from './definition/define-entity';

/** A named list of options (`product_status`, `product_tags`). */
export const ExtensibleEnumEntity = defineEntity({
  name: 'ExtensibleEnum',
  fields: {
    code: { type: 'varchar', required: true, unique: true, maxLength: 100 },
    name: { type: 'varchar', required: true },
    options: { type: 'linkMultiple', entity: 'ExtensibleEnumOption', foreign: 'extensibleEnum' },
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
    extensibleEnum: { type: 'link', entity: 'ExtensibleEnum', required: true },
  },
  uniqueIndexes: { list_code: ['extensibleEnum', 'code'] },
});
