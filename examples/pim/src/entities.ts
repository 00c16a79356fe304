import { defineEntity } from '@entity-records/core';
// `isMultilang` on field definitions comes with the multilang plugin.
import type {} from '@entity-records/multilang';

export const Brand = defineEntity({
  name: 'Brand',
  fields: {
    name: { type: 'varchar', required: true, unique: true },
    code: { type: 'varchar' },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'brand' },
  },
});

export const Category = defineEntity({
  name: 'Category',
  fields: {
    name: { type: 'varchar', required: true, isMultilang: true },
    code: { type: 'varchar', required: true },
    parent: { type: 'link', entity: 'Category' },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' },
  },
  uniqueIndexes: { code: ['code'] },
});

export const Product = defineEntity({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true, isMultilang: true },
    sku: { type: 'varchar', unique: true },
    mpn: { type: 'varchar' },
    description: { type: 'text', isMultilang: true },
    price: { type: 'float' },
    quantity: { type: 'int' },
    isActive: { type: 'bool', default: true },
    releaseDate: { type: 'date' },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'product_status' },
    tags: { type: 'linkMultiple', entity: 'ExtensibleEnumOption', extensibleEnum: 'product_tags' },
    mainImage: { type: 'link', entity: 'File' },
  },
  uniqueIndexes: { brand_mpn: ['brand', 'mpn'] },
});

export const pimEntities = [Brand, Category, Product];
