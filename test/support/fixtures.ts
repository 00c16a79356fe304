import { defineEntity } from '@entity-records/core';

/** Sample definitions used across tests: every field type and every link kind. */
export const Brand = defineEntity({
  name: 'Brand',
  fields: {
    name: { type: 'varchar', required: true, unique: true },
    code: { type: 'varchar', maxLength: 20 },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'brand' },
  },
});

export const Category = defineEntity({
  name: 'Category',
  fields: {
    name: { type: 'varchar', required: true },
    code: { type: 'varchar', required: true },
    parent: { type: 'link', entity: 'Category' },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' },
  },
  uniqueIndexes: { code: ['code'] },
});

export const Product = defineEntity({
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true },
    sku: { type: 'varchar', unique: true },
    mpn: { type: 'varchar' },
    description: { type: 'text' },
    price: { type: 'float', min: 0 },
    quantity: { type: 'int' },
    isActive: { type: 'bool', default: true },
    releaseDate: { type: 'date' },
    availableAt: { type: 'datetime' },
    color: { type: 'enum', options: ['red', 'green', 'blue'] },
    labels: { type: 'multiEnum', options: ['new', 'sale', 'eco'] },
    specs: { type: 'jsonObject' },
    internalNote: { type: 'varchar', readOnly: true },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
  },
  uniqueIndexes: { brand_mpn: ['brand', 'mpn'] },
});

export const testEntities = [Brand, Category, Product];
