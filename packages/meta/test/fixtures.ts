import { defineEntity } from '@entity-records/core';
import type { TestApi } from '../../../test/support/api';
import { Brand } from '../../../test/support/fixtures';

export const Category = defineEntity({
  name: 'Category',
  fields: {
    name: { type: 'varchar', required: true },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' },
  },
});

export const Product = defineEntity({
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'status' },
    tags: { type: 'linkMultiple', entity: 'ExtensibleEnumOption', extensibleEnum: 'tags' },
    assignedUser: { type: 'link', entity: 'User' },
  },
});

export const entities = [Brand, Category, Product];

export interface Option {
  id: string;
  code: string;
  name: string | null;
  color: string | null;
  sortOrder: number | null;
}

/** The lists `status` (draft, active) and `tags` (new, sale), with their options by code. */
export async function seedLists(t: TestApi): Promise<Record<string, Option>> {
  const options: Record<string, Option> = {};
  for (const [list, codes] of [['status', ['draft', 'active']], ['tags', ['new', 'sale']]] as const) {
    const enumId = (await t.post('/api/ExtensibleEnum', { code: list, name: list }).expect(200)).body.id;
    for (const [sortOrder, code] of codes.entries()) {
      const body = { code, name: code.toUpperCase(), color: `#00000${sortOrder}`, sortOrder, extensibleEnumId: enumId };
      const created = (await t.post('/api/ExtensibleEnumOption', body).expect(200)).body;
      options[code] = { id: created.id, code, name: body.name, color: body.color, sortOrder };
    }
  }
  return options;
}
