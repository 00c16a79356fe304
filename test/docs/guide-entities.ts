import { defineEntity } from '@entity-records/core';

// The entities of docs/guide/getting-started.md, in one place for two uses: the samples' prelude
// re-exports them (compiled against the built packages), and the sample test builds from them the
// OpenAPI document that the typed-client sample's types are generated from.

export const Brand = defineEntity({
  name: 'Brand',
  fields: { name: { type: 'varchar', required: true, unique: true }, products: { type: 'linkMultiple', entity: 'Product', foreign: 'brand' } },
});

export const Product = defineEntity({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true },
    sku: { type: 'varchar', unique: true },
    price: { type: 'float', min: 0 },
    isActive: { type: 'bool', default: true },
    brand: { type: 'link', entity: 'Brand' },
  },
});
