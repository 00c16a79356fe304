/**
 * Type tests: compiled by test/typecheck.test.ts (tsc over the repository), never run. Each
 * `@ts-expect-error` fails the type check when the line below it compiles, so a check that
 * stops catching a mistake is noticed.
 */
import { createEntityApi, defineEntity, systemContext, type ApiRecord, type EntityApi, type InferRecord, type Logger } from '@entity-records/core';
import files from '@entity-records/files';
import pino from 'pino';
import sharing from '@entity-records/sharing';

// Unknown options are compile errors in defineEntity, for fields and entities alike.
defineEntity({
  name: 'Typo',
  fields: {
    // @ts-expect-error 'requird' is not a field option
    name: { type: 'varchar', requird: true },
    // @ts-expect-error 'uniqe' is not a field option
    sku: { type: 'varchar', uniqe: true },
    // @ts-expect-error 'maxLenght' is not a field option
    code: { type: 'varchar', maxLenght: 20 },
  },
});
// The options those typos meant compile.
defineEntity({ name: 'Spelled', fields: { name: { type: 'varchar', required: true }, sku: { type: 'varchar', unique: true }, code: { type: 'varchar', maxLength: 20 } } });
defineEntity({
  name: 'Typo',
  fields: { sku: { type: 'varchar' } },
  // @ts-expect-error 'uniqueIndex' is not an entity option
  uniqueIndex: { sku: ['sku'] },
});

// Row rules and hooks in a definition: a hook name that is not one is a compile error.
defineEntity({
  name: 'Owned',
  fields: { tenantId: { type: 'varchar' } },
  access: (ctx) => (ctx.user?.isAdmin ? true : { type: 'equals', attribute: 'tenantId', value: ctx.user?.id }),
  hooks: { beforeCreate: ({ data }) => void data, afterRead: async () => undefined },
});
defineEntity({
  name: 'Typo',
  fields: {},
  // @ts-expect-error 'beforeCreat' is not a record hook
  hooks: { beforeCreat: () => undefined },
});
defineEntity({
  name: 'Typo',
  fields: {},
  // @ts-expect-error access answers true, false or where items
  access: () => 'all',
});

const Brand = defineEntity({ name: 'Brand', fields: { name: { type: 'varchar', required: true, unique: true } } });
const Product = defineEntity({
  name: 'Product',
  fields: {
    name: { type: 'varchar', required: true },
    price: { type: 'float', min: 0 },
    isActive: { type: 'bool', default: true },
    status: { type: 'enum', options: ['draft', 'active'], required: true, default: 'draft' },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category' },
    secret: { type: 'varchar', writeOnly: true },
    computedAt: { type: 'datetime', readOnly: true },
  },
});

const api = createEntityApi({
  database: 'sqlite::memory:',
  entities: [Brand, Product],
  plugins: [[files, { storageDir: 'data/files' }], sharing],
});

export async function typedRepositories(): Promise<void> {
  const ctx = systemContext();
  const products = api.repository('Product');
  const created = await products.create(ctx, { name: 'Chair', price: 49.9, brandId: null, categoriesIds: [], secret: 's' });
  const price: number | null = created.price;
  const brandId: string | null = created.brandId;
  const status: 'draft' | 'active' = created.status;
  void [price, brandId, status];
  // @ts-expect-error writeOnly fields are never read back
  void created.secret;
  // @ts-expect-error name is required on create
  await products.create(ctx, { price: 1 });
  // @ts-expect-error price is a number
  await products.create(ctx, { name: 'x', price: 'cheap' });
  // @ts-expect-error unknown field
  await products.create(ctx, { name: 'x', prize: 1 });
  // @ts-expect-error a read-only field is not written
  await products.update(ctx, created.id, { computedAt: '2026-01-01 00:00:00' });
  // @ts-expect-error a required field cannot be cleared
  await products.update(ctx, created.id, { name: null });
  await products.update(ctx, created.id, { price: null, brand: { name: 'Acme' }, categories: [{ name: 'Chairs' }] });
  const { list } = await products.find(ctx, { maxSize: 10 });
  const names: string[] | undefined = list?.map((p) => p.name);
  void names;

  // The documented explicit form compiles, and gives the same record type.
  const brands = api.repository<InferRecord<typeof Brand>>('Brand');
  const brand: InferRecord<typeof Brand> = await brands.get(ctx, 'id');
  void brand;
  // Entity types of core and plugins: plain records.
  const users = api.repository('User');
  const user: ApiRecord = await users.get(ctx, 'id');
  void user;
  // A typed instance goes wherever an EntityApi is expected.
  const plain: EntityApi = api;
  void plain;
}

// Plugin options are checked where the host registers the plugin.
createEntityApi({
  database: 'sqlite::memory:',
  entities: [Brand],
  // @ts-expect-error storageDir is a string
  plugins: [[files, { storageDir: 1 }]],
});
createEntityApi({
  database: 'sqlite::memory:',
  entities: [Brand],
  // @ts-expect-error an option the plugin does not have
  plugins: [[files, { storageDir: 'x', thumbnailSize: 3 }]],
});

// pino's calling convention (facts first, message second) is the Logger's: pino fits as it is.
const logger: Logger = pino({ level: 'debug' });
void logger;
