import type { Mode } from './routes';
import { FULL, withRole, type Role, type World } from './world';

/** How every route must refuse a write: the status and code where the route tells them, and the message. */
export interface Refusal {
  status: number;
  code: string;
  message: string;
}

/** One rule of CONTRACT §15, as a write that every route must answer alike. */
export interface RuleCase {
  rule: string;
  role?: Role;
  modes: readonly Mode[];
  /** Only the routes that look records up by their keys (upserts). */
  upsertOnly?: boolean;
  /** The fields written (an update writes them to a record the admin made with `STORED`). */
  body(w: World, mode: Mode): Record<string, unknown>;
  /** The refusal, or `stored` with a check of the record written (as the admin reads it). */
  expect: ((w: World) => Refusal) | { stored: (record: Record<string, unknown>, w: World) => void | Promise<void> };
}

/** What the record an update writes holds before it. */
export const STORED = { name: 'Target', price: 5, quantity: 1 };

/** A create needs the required name; an update sends only the fields of the case. */
const named = (mode: Mode, body: Record<string, unknown>) => (mode === 'create' ? { name: 'New', ...body } : body);

const refused = (status: number, code: string, message: string) => (): Refusal => ({ status, code, message });
const forbidden = (message: string) => refused(403, 'CORE_FORBIDDEN', message);
const invalidLink = (message: (w: World) => string) => (w: World): Refusal => ({ status: 400, code: 'CORE_INVALID_LINK', message: message(w) });

const both = ['create', 'update'] as const;

export const RULE_CASES: RuleCase[] = [
  {
    rule: 'a field the role may not edit is 403, changed',
    role: withRole({ fields: { Product: { price: { edit: false } } } }),
    modes: both,
    body: (_w, mode) => named(mode, { price: 9 }),
    expect: forbidden('Not allowed to edit Product.price'),
  },
  {
    rule: 'a field the role may not edit is 403, also sent unchanged (no comparison with the stored value)',
    role: withRole({ fields: { Product: { price: { edit: false } } } }),
    modes: both,
    body: (_w, mode) => named(mode, { price: STORED.price }),
    expect: forbidden('Not allowed to edit Product.price'),
  },
  {
    rule: 'a field the role may not read is not editable either',
    role: withRole({ fields: { Product: { price: { read: false } } } }),
    modes: both,
    body: (_w, mode) => named(mode, { price: STORED.price }),
    expect: forbidden('Not allowed to edit Product.price'),
  },
  {
    rule: 'a link to a record that does not exist is 400',
    modes: both,
    body: (_w, mode) => named(mode, { brandId: 'no-such-brand' }),
    expect: invalidLink(() => "Brand 'no-such-brand' not found (brandId)"),
  },
  {
    rule: 'a link to a record the caller may not read is the same 400',
    role: withRole({ scopes: { Brand: { read: 'own' } } }),
    modes: both,
    body: (w, mode) => named(mode, { brandId: w.brand.id }),
    expect: invalidLink((w) => `Brand '${w.brand.id}' not found (brandId)`),
  },
  {
    rule: 'a multiple link to records of a type the caller may not read is the same 400',
    role: withRole({ scopes: { Category: { read: 'no' } } }),
    modes: both,
    body: (w, mode) => named(mode, { categoriesIds: [w.category] }),
    expect: invalidLink((w) => `Category '${w.category}' not found (categoriesIds)`),
  },
  {
    rule: "a link to ExtensibleEnumOption must name an option of the field's own list",
    modes: both,
    body: (w, mode) => named(mode, { statusId: w.option.new }),
    expect: invalidLink((w) => `Option '${w.option.new}' is not in the list 'product_status' of status`),
  },
  {
    rule: "an option of the field's list is read through the field: linked by id without rights on ExtensibleEnumOption",
    role: withRole({ scopes: { ExtensibleEnumOption: { read: 'no' } } }),
    modes: both,
    body: (w, mode) => named(mode, { statusId: w.option.active }),
    expect: { stored: (record, w) => expect(record).toMatchObject({ statusId: w.option.active, statusName: 'active' }) },
  },
  {
    rule: "an option of the field's list is read through the field: found by find-or-create as by id",
    role: withRole({ scopes: { ExtensibleEnumOption: { read: 'no' } } }),
    modes: both,
    body: (_w, mode) => named(mode, { status: { code: 'active' } }),
    expect: { stored: (record, w) => expect(record).toMatchObject({ statusId: w.option.active, statusName: 'active' }) },
  },
  {
    rule: 'find-or-create of an option without code derives the code from its name',
    role: withRole({ scopes: { ExtensibleEnumOption: { create: true } } }),
    modes: both,
    body: (_w, mode) => named(mode, { status: { name: 'Green Apple!' } }),
    expect: {
      async stored(record, w) {
        expect(record.statusName).toBe('Green Apple!');
        expect((await w.t.get(`/api/ExtensibleEnumOption/${String(record.statusId)}`).expect(200)).body.code).toBe('green_apple_');
      },
    },
  },
  {
    rule: 'find-or-create searches only records the caller may read',
    role: withRole({ scopes: { Brand: { read: 'own' } } }),
    modes: both,
    body: (w, mode) => named(mode, { brand: { name: w.brand.name } }),
    expect: refused(409, 'CORE_UNIQUE_VIOLATION', 'Brand with the same name already exists'),
  },
  {
    rule: 'find-or-create creates only where the caller may create',
    role: withRole({ scopes: { Brand: { create: false } } }),
    modes: both,
    body: (_w, mode) => named(mode, { brand: { name: 'Never made' } }),
    expect: forbidden('Not allowed to create Brand'),
  },
  {
    rule: 'a read-only field is 400 when changed',
    modes: both,
    body: (_w, mode) => named(mode, { internalNote: 'mine' }),
    expect: refused(400, 'CORE_READ_ONLY_FIELD', 'internalNote is read-only'),
  },
  {
    rule: 'an unknown field is 400',
    modes: both,
    body: (_w, mode) => named(mode, { nope: 1 }),
    expect: refused(400, 'CORE_UNKNOWN_FIELD', 'Unknown field for Product: nope'),
  },
  {
    rule: 'a value of the wrong type is 400',
    modes: both,
    body: (_w, mode) => named(mode, { quantity: 'many' }),
    expect: refused(400, 'CORE_VALIDATION_FAILED', 'Invalid Product: quantity must be integer or null'),
  },
  {
    rule: "edit level own: another user's record is 403",
    role: withRole({ scopes: { Product: { edit: 'own' } } }),
    modes: ['update'],
    body: () => ({ price: 1 }),
    expect: forbidden('Not allowed to edit this Product'),
  },
  {
    rule: 'no edit right: 403',
    role: withRole({ scopes: { Product: { edit: 'no' } } }),
    modes: ['update'],
    body: () => ({ price: 1 }),
    expect: forbidden('Not allowed to edit Product'),
  },
  {
    rule: 'no edit right: 403, also for a write of links alone',
    role: withRole({ scopes: { Product: { edit: 'no' } } }),
    modes: ['update'],
    body: (w) => ({ categoriesIds: [w.category] }),
    expect: forbidden('Not allowed to edit Product'),
  },
  {
    rule: "a many-to-many pair is in both records' lists: no edit right on the other side's type is 403",
    role: withRole({ scopes: { Category: { edit: 'no' } } }),
    modes: both,
    body: (w, mode) => named(mode, { categoriesIds: [w.category] }),
    expect: forbidden('Not allowed to edit Category'),
  },
  {
    rule: "a many-to-many pair is in both records' lists: edit level own on the other side, another user's record is 403",
    role: withRole({ scopes: { Category: { edit: 'own' } } }),
    modes: both,
    body: (w, mode) => named(mode, { categoriesIds: [w.category] }),
    expect: forbidden('Not allowed to edit this Category'),
  },
  {
    rule: "a many-to-many pair is in both records' lists: stored where the role may edit both",
    modes: both,
    body: (w, mode) => named(mode, { categoriesIds: [w.category] }),
    expect: { stored: (record, w) => expect(record.categoriesIds).toEqual([w.category]) },
  },
  {
    rule: 'a link field the role may not edit is 403',
    role: withRole({ fields: { Product: { brand: { edit: false } } } }),
    modes: both,
    body: (w, mode) => named(mode, { brandId: w.brand.id }),
    expect: forbidden('Not allowed to edit Product.brand'),
  },
  {
    rule: 'no create right: 403',
    role: withRole({ scopes: { Product: { create: false } } }),
    modes: ['create'],
    body: () => ({ name: 'New' }),
    expect: forbidden('Not allowed to create Product'),
  },
  {
    rule: 'an upsert never looks a record up by a field the caller may not read',
    role: withRole({ fields: { Product: { sku: { read: false } } } }),
    modes: ['create'],
    upsertOnly: true,
    body: () => ({ sku: 'TARGET-SKU', name: 'Guess' }),
    expect: forbidden('Not allowed to look up Product by sku'),
  },
  {
    rule: 'an upsert does not find a record the caller cannot see: it collides with it',
    role: withRole({ scopes: { Product: { read: 'own', edit: 'own' } } }),
    modes: ['create'],
    upsertOnly: true,
    body: () => ({ sku: 'TARGET-SKU', name: 'Guess' }),
    expect: refused(409, 'CORE_UNIQUE_VIOLATION', 'Product with the same sku already exists'),
  },
  {
    rule: 'a create naming the id of a record of a type the caller may not read at all collides with it, as one under own does',
    role: withRole({ scopes: { Product: { read: 'no', edit: 'no' } } }),
    modes: ['create'],
    body: (w) => ({ id: w.target, name: 'Guess' }),
    expect: refused(409, 'CORE_UNIQUE_VIOLATION', 'Product with the same id already exists'),
  },
  {
    rule: 'a create that collides with a record the caller cannot see is judged by its rules first: a field it may not edit is 403',
    role: withRole({ scopes: { Product: { read: 'own', edit: 'own' } }, fields: { Product: { price: { edit: false } } } }),
    modes: ['create'],
    body: () => ({ sku: 'TARGET-SKU', name: 'Guess', price: 1 }),
    expect: forbidden('Not allowed to edit Product.price'),
  },
  {
    rule: 'a create that collides with a record the caller cannot see is judged by its rules first: a link it may not read is 400',
    role: withRole({ scopes: { Product: { read: 'own', edit: 'own' }, Brand: { read: 'own' } } }),
    modes: ['create'],
    body: (w) => ({ sku: 'TARGET-SKU', name: 'Guess', brandId: w.brand.id }),
    expect: invalidLink((w) => `Brand '${w.brand.id}' not found (brandId)`),
  },
  {
    rule: 'a write within the rules is stored, with a readable link and an option of the list',
    modes: both,
    body: (w, mode) => named(mode, { price: 7, brandId: w.brand.id, statusId: w.option.active, tagsIds: [w.option.sale] }),
    expect: { stored: (record, w) => expect(record).toMatchObject({ price: 7, brandId: w.brand.id, statusId: w.option.active, tagsIds: [w.option.sale] }) },
  },
];

export { FULL };
