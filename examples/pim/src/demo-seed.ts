import { definePlugin, systemContext, type ApiRecord, type EntityApi, type RequestContext } from '@entity-records/core';
import { filesOf, type FileService } from '@entity-records/files';
import { tilePng } from './png';

// The demo's unique values (brand names, category codes, attribute codes) are none of those the
// README and the guides create: a newcomer who follows them on the demo database would otherwise
// meet 409 where they promise 200 (a brand `Acme`, a category `chairs`, an attribute `weight`).
const BRANDS = ['Arkwood', 'Nordwerk', 'Bellavia', 'Kinto', 'Oakline', 'Tessera', 'Lumen', 'Fjordhus'];
/** Code, English and German name of each category, and the singular its products are named by. */
const CATEGORIES: [code: string, name: string, german: string, noun: string, germanNoun: string][] = [
  ['seating', 'Chairs', 'Stühle', 'Chair', 'Stuhl'],
  ['dining', 'Tables', 'Tische', 'Table', 'Tisch'],
  ['lighting', 'Lamps', 'Lampen', 'Lamp', 'Lampe'],
  ['storage', 'Shelves', 'Regale', 'Shelf', 'Regal'],
  ['lounge', 'Sofas', 'Sofas', 'Sofa', 'Sofa'],
  ['textiles', 'Rugs', 'Teppiche', 'Rug', 'Teppich'],
];
const COLORS: [name: string, rgb: [number, number, number]][] = [
  ['black', [30, 30, 30]],
  ['white', [200, 200, 190]],
  ['red', [170, 40, 40]],
  ['green', [50, 120, 60]],
  ['blue', [40, 70, 160]],
  ['oak', [150, 110, 60]],
];
const MATERIALS = ['oak', 'steel', 'linen', 'walnut', 'wool', 'glass'];
const LINES = [['Classic', 'Klassik'], ['Compact', 'Kompakt'], ['Grand', 'Grande'], ['Soft', 'Soft'], ['Slim', 'Slim']];
/** How many products the demo has. */
export const DEMO_PRODUCTS = 300;

/** The file service of the instance, for the demo images: the plugin hands it over during setup. */
export function demoImages(): { plugin: ReturnType<typeof definePlugin>; files: () => FileService } {
  let service: FileService | undefined;
  const plugin = definePlugin({
    name: 'pim-demo-images',
    dependencies: ['@entity-records/files'],
    setup(api) {
      service = filesOf(api);
    },
  });
  return { plugin, files: () => service as FileService };
}

/** A record found by code, or made from `data`. */
async function ensure(api: EntityApi, entity: string, data: Record<string, unknown> & { code: string }): Promise<ApiRecord> {
  const repository = api.repository(entity);
  const where = [{ type: 'equals', attribute: 'code', value: data.code }, ...(entity === 'Attribute' ? [{ type: 'equals', attribute: 'entityType', value: 'Product' }] : [])];
  const found = (await repository.find(systemContext(), { where, maxSize: 1, collectionOnly: true })).list?.[0];
  return found ?? repository.create(systemContext(), data);
}

async function seedAttributes(api: EntityApi): Promise<void> {
  const measure = (await api.repository('Measure').find(systemContext(), { where: [{ type: 'equals', attribute: 'code', value: 'weight' }], maxSize: 1, collectionOnly: true })).list?.[0];
  await ensure(api, 'Attribute', { code: 'netWeight', name: 'Net weight', entityType: 'Product', type: 'float', measureId: measure?.id ?? null });
  await ensure(api, 'Attribute', { code: 'finish', name: 'Finish', entityType: 'Product', type: 'enum', options: COLORS.map(([name]) => name) });
  await ensure(api, 'Attribute', { code: 'frameMaterial', name: 'Frame material', entityType: 'Product', type: 'varchar' });
}

async function seedImages(files: FileService, ctx: RequestContext): Promise<string[]> {
  const ids: string[] = [];
  for (const [name, rgb] of COLORS) {
    const stored = await files.store(tilePng(96, rgb), 'image/png');
    ids.push((await files.createRecord(ctx, { name: `${name}.png` }, stored)).id);
  }
  return ids;
}

/** The option id of a code in a list (`product_status`). */
async function optionId(api: EntityApi, code: string): Promise<string | null> {
  const found = await api.repository('ExtensibleEnumOption').find(systemContext(), { where: [{ type: 'equals', attribute: 'code', value: code }], maxSize: 1, collectionOnly: true });
  return found.list?.[0]?.id ?? null;
}

/** Whether the database has products or brands already: the demo is only for a new database. */
async function hasRecords(api: EntityApi): Promise<boolean> {
  const count = async (entity: string) => (await api.repository(entity).find(systemContext(), { totalOnly: true })).total ?? 0;
  return (await count('Product')) > 0 || (await count('Brand')) > 0;
}

/**
 * Brands, categories (with German names), attributes, a few images and `DEMO_PRODUCTS` products
 * with links, attribute values and a main image; only on a database with no brand or product.
 * Answers how many products it made.
 */
export async function seedDemo(api: EntityApi, files: FileService): Promise<number> {
  if (await hasRecords(api)) return 0;
  const ctx: RequestContext = { ...systemContext(), flattenAttributes: true };
  await seedAttributes(api);
  const images = await seedImages(files, systemContext());
  const brands = await Promise.all(BRANDS.map((name) => ensure(api, 'Brand', { code: name.toUpperCase(), name })));
  const categories: ApiRecord[] = [];
  const german = api.languages.has('de_DE');
  for (const [code, name, de] of CATEGORIES) categories.push(await ensure(api, 'Category', { code, name, ...(german && { nameDeDE: de }) }));
  const status = { draft: await optionId(api, 'draft'), active: await optionId(api, 'active') };
  const products = api.repository('Product');
  for (let i = 0; i < DEMO_PRODUCTS; i++) {
    const [code, , , noun, germanNoun] = CATEGORIES[i % CATEGORIES.length];
    const [line, germanLine] = LINES[i % LINES.length];
    const colour = COLORS[i % COLORS.length];
    await products.create(ctx, {
      name: `${noun} ${line} ${i + 1}`,
      ...(german && { nameDeDE: `${germanNoun} ${germanLine} ${i + 1}` }),
      sku: `DEMO-${String(i + 1).padStart(4, '0')}`,
      mpn: `${code.slice(0, 3).toUpperCase()}-${1000 + i}`,
      price: Math.round((19 + ((i * 37) % 480)) * 100) / 100 - 0.01,
      quantity: (i * 13) % 120,
      releaseDate: `2026-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`,
      brandId: brands[i % brands.length].id,
      categoriesIds: [categories[i % categories.length].id],
      statusId: i % 4 === 0 ? status.draft : status.active,
      mainImageId: images[i % images.length],
      netWeight: Math.round((1 + (i % 40) * 0.75) * 10) / 10,
      finish: colour[0],
      frameMaterial: MATERIALS[i % MATERIALS.length],
    });
  }
  return DEMO_PRODUCTS;
}
