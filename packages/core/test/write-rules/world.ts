import { defineEntity, definePlugin } from '@entity-records/core';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { userWithRole, type UserClient } from '../../../../test/support/users';

/** The records of the reference app that the rules concern: links, an option list on each of two fields, a read-only field, attributes. */
const Brand = defineEntity({ name: 'Brand', fields: { name: { type: 'varchar', required: true, unique: true }, code: { type: 'varchar' } } });
const Category = defineEntity({
  name: 'Category',
  fields: { name: { type: 'varchar', required: true }, code: { type: 'varchar' }, products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' } },
});
const Product = defineEntity({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true },
    sku: { type: 'varchar', unique: true },
    mpn: { type: 'varchar' },
    price: { type: 'float' },
    quantity: { type: 'int' },
    internalNote: { type: 'varchar', readOnly: true },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'product_status' },
    tags: { type: 'linkMultiple', entity: 'ExtensibleEnumOption', extensibleEnum: 'product_tags' },
  },
  uniqueIndexes: { brand_mpn: ['brand', 'mpn'] },
});

/** A write hook on Product and nothing else: upserts of Product then take the single-record path. */
const productHook = definePlugin({ name: 'product-hook', setup: (api) => api.onRecord('afterUpdate', 'Product', () => undefined) });

export type Role = { scopes: Record<string, Record<string, unknown>>; fields?: Record<string, Record<string, Record<string, boolean>>> };

/**
 * The rights every case starts from: all on Product and Brand, read on what Product links to, and
 * edit on Category (a pair of `Product.categories` is in the category's `products` too).
 */
export const FULL: Role = {
  scopes: {
    Product: { create: true, read: 'all', edit: 'all', delete: 'all' },
    Brand: { create: true, read: 'all', edit: 'all', delete: 'all' },
    Category: { read: 'all', edit: 'all' },
    ExtensibleEnumOption: { read: 'all' },
  },
};

/** `FULL` with some scopes or field rights replaced. */
export const withRole = (change: { scopes?: Role['scopes']; fields?: Role['fields'] }): Role => ({
  scopes: { ...FULL.scopes, ...Object.fromEntries(Object.entries(change.scopes ?? {}).map(([e, s]) => [e, { ...FULL.scopes[e], ...s }])) },
  fields: change.fields,
});

/** One instance with the records the cases name. */
export interface World {
  t: TestApi;
  /** A brand made by the admin. */
  brand: { id: string; name: string };
  category: string;
  /** Options by code: `draft`, `active` of product_status; `new`, `sale` of product_tags. */
  option: Record<string, string>;
  /** A link attribute of Product to Brand. */
  maker: { id: string; code: string };
  /** The id of the product the upsert lookup cases name by its key (sku `TARGET-SKU`). */
  target: string;
  /** A client acting as a user of this role (one user per role). */
  as(role: Role): Promise<UserClient>;
}

async function created(t: TestApi, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.post(path, body);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/**
 * Starts an instance with the world of the cases; `singlePath` gives Product a write hook, so
 * that upserts go through the single-record path.
 */
export async function startWorld(kind: 'sqlite' | 'postgres', { singlePath }: { singlePath?: boolean } = {}): Promise<World> {
  // Jobs start at once: every rule runs through the job routes too, and no test here cancels one.
  const t = await startTestApi(kind, { entities: [Brand, Category, Product], plugins: singlePath ? [productHook] : [], jobs: { startDelayMs: 0 } });
  const option: Record<string, string> = {};
  for (const [list, codes] of [['product_status', ['draft', 'active']], ['product_tags', ['new', 'sale']]] as const) {
    const listId = await created(t, '/api/ExtensibleEnum', { code: list, name: list });
    for (const code of codes) option[code] = await created(t, '/api/ExtensibleEnumOption', { code, name: code, extensibleEnumId: listId });
  }
  const brand = { id: await created(t, '/api/Brand', { name: 'Admin brand' }), name: 'Admin brand' };
  const category = await created(t, '/api/Category', { name: 'Admin category' });
  const maker = { id: await created(t, '/api/Attribute', { entityType: 'Product', code: 'maker', name: 'Maker', type: 'link', linkEntity: 'Brand' }), code: 'maker' };
  // The record the upsert lookup cases name by its key.
  const target = await created(t, '/api/Product', { name: 'Target', sku: 'TARGET-SKU' });
  const users = new Map<string, Promise<UserClient>>();
  const as = (role: Role) => {
    const key = JSON.stringify(role);
    if (!users.has(key)) users.set(key, userWithRole(t, role));
    return users.get(key) as Promise<UserClient>;
  };
  return { t, brand, category, option, maker, target, as };
}

export { finishedJob } from '../../../../test/support/jobs';
