import { defineEntity } from '@entity-records/core';
import type {} from '@entity-records/multilang';
import { Brand } from '../../../test/support/fixtures';

export const LANGUAGES = ['en_US', 'de_DE', 'fr_FR'];

export const Category = defineEntity({
  name: 'Category',
  fields: {
    name: { type: 'varchar', required: true, isMultilang: true, maxLength: 40 },
    code: { type: 'varchar', required: true, unique: true },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' },
  },
});

export const Product = defineEntity({
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true, isMultilang: true },
    sku: { type: 'varchar', unique: true },
    description: { type: 'text', isMultilang: true },
    price: { type: 'float' },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'status' },
  },
});

export { Brand };
export const entities = [Brand, Category, Product];
