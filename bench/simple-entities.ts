/**
 * The simple schema of the `simple` list mode and of the upsert bench: a Brand with a unique name
 * and a Product with seven fields and a link to its brand. Plain definitions, so that the floor
 * and the seed can read the same facts without loading core.
 */
export const BRAND = { name: 'Brand', fields: { name: { type: 'varchar', required: true, unique: true } } } as const;

export const PRODUCT = {
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true },
    sku: { type: 'varchar', unique: true },
    price: { type: 'float' },
    quantity: { type: 'int' },
    isActive: { type: 'bool', default: true },
    brand: { type: 'link', entity: 'Brand' },
    description: { type: 'text' },
  },
} as const;
