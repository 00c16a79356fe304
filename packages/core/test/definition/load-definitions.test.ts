import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BootError, createEntityApi, loadDefinitions, readDefinitionsFile } from '@entity-records/core';

const brand = () => ({
  name: 'Brand',
  fields: {
    name: { type: 'varchar', required: true, unique: true },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'brand' },
  },
});
const product = () => ({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true, maxLength: 200 },
    mpn: { type: 'varchar' },
    color: { type: 'enum', options: ['red', 'green'], default: 'red' },
    isActive: { type: 'bool', default: true },
    brand: { type: 'link', entity: 'Brand' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
    owner: { type: 'link', entity: 'User' },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'product_status' },
  },
  uniqueIndexes: { brand_mpn: ['brand', 'mpn'] },
});
const category = () => ({
  name: 'Category',
  fields: {
    code: { type: 'varchar', required: true },
    parent: { type: 'link', entity: 'Category' },
    products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' },
  },
  uniqueIndexes: { code: ['code'] },
});
const good = () => [brand(), product(), category()];

/** Runs `fn`, expects a CORE_DEFINITION_INVALID BootError, returns its message. */
function definitionError(fn: () => unknown): string {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(BootError);
  expect((caught as BootError).code).toBe('CORE_DEFINITION_INVALID');
  return (caught as BootError).message;
}

describe('loadDefinitions', () => {
  it('returns good definitions, from objects or JSON text, that an instance accepts', async () => {
    const loaded = loadDefinitions(good());
    expect(loaded.map((d) => d.name)).toEqual(['Brand', 'Product', 'Category']);
    expect(loadDefinitions(JSON.stringify(good()))).toEqual(loaded);
    expect(loadDefinitions({ entities: good() })).toEqual(loaded);
    expect(loadDefinitions({ name: 'Note', fields: { title: { type: 'text' } } })).toHaveLength(1);
    const api = createEntityApi({ database: 'sqlite::memory:', entities: loaded });
    try {
      expect(api.schema.entity('Product')?.field.get('categories')).toMatchObject({ linkKind: 'manyToMany' });
      expect(api.schema.entity('Brand')?.field.get('products')).toMatchObject({ linkKind: 'hasMany' });
    } finally {
      await api.close();
    }
  });

  it('checks links against the known definitions it is given', () => {
    const note = { name: 'Note', fields: { owner: { type: 'link', entity: 'User' }, viewers: { type: 'linkMultiple', entity: 'Role' } } };
    expect(loadDefinitions([note])).toEqual([note]);
    const message = definitionError(() =>
      loadDefinitions([{ name: 'Note', fields: { owner: { type: 'link', entity: 'User' } } }], { known: [] }),
    );
    expect(message).toContain("entity 'Note', field 'owner'");
  });

  it.each([
    ['not JSON', '[{"name": "Brand",', /not valid JSON/],
    ['not a definition list', 42, /expected an entity definition/],
    ['an item without a name', [{ fields: {} }], /definition #1 has no "name"/],
    ['entities that are not a list', { entities: 'Brand' }, /"entities" must be an array/],
  ])('rejects input that is %s', (_what, input, pattern) => {
    expect(definitionError(() => loadDefinitions(input))).toMatch(pattern);
  });
});

describe('loadDefinitions rejects, naming entity and field,', () => {
  const withField = (entity: () => Record<string, unknown>, field: string, def: unknown) => {
    const d = entity() as { fields: Record<string, unknown> };
    d.fields[field] = def;
    return d;
  };
  const cases: [string, () => unknown[], string, string, RegExp][] = [
    ['a bad field name', () => [withField(brand, 'Bad Name', { type: 'varchar' }), product(), category()], 'Brand', 'Bad Name', /the field name must match/],
    ['an unknown type', () => [withField(brand, 'weight', { type: 'number' }), product(), category()], 'Brand', 'weight', /type "number" is unknown/],
    ['an enum without options', () => [withField(brand, 'size', { type: 'enum' }), product(), category()], 'Brand', 'size', /needs options/],
    ['an empty options list', () => [withField(brand, 'size', { type: 'multiEnum', options: [] }), product(), category()], 'Brand', 'size', /needs options/],
    ['a link to an unknown entity', () => [withField(brand, 'maker', { type: 'link', entity: 'Maker' }), product(), category()], 'Brand', 'maker', /unknown entity 'Maker'/],
    ['a foreign that does not point back', () => [withField(brand, 'products', { type: 'linkMultiple', entity: 'Product', foreign: 'mpn' }), product(), category()], 'Brand', 'products', /'Product.mpn' is not a link back to Brand/],
    ['a many-to-many whose other side names another foreign', () => [brand(), product(), withField(category, 'items', { type: 'linkMultiple', entity: 'Product', foreign: 'categories' })], 'Category', 'items', /'Product.categories' must name 'items' as its foreign/],
    ['a many-to-many whose sides name two join tables', () => [brand(), product(), withField(category, 'products', { type: 'linkMultiple', entity: 'Product', foreign: 'categories', relationName: 'x_y' })], 'Product', 'categories', /relationName '' differs from 'Category.products' \('x_y'\)/],
    ['a unique index on an unknown field', () => [brand(), { ...product(), uniqueIndexes: { brand_gtin: ['brand', 'gtin'] } }, category()], 'Product', 'gtin', /unique index 'brand_gtin' names an unknown field/],
    ['a unique index on a linkMultiple', () => [brand(), { ...product(), uniqueIndexes: { cats: ['categories'] } }, category()], 'Product', 'categories', /cannot hold a linkMultiple/],
    ['a system field name', () => [withField(brand, 'createdAt', { type: 'datetime' }), product(), category()], 'Brand', 'createdAt', /system field name/],
    ['a field whose record key another takes', () => [withField(product, 'brandId', { type: 'varchar' }), brand(), category()], 'Product', 'brandId', /record key 'brandId' is already taken by field 'brand'/],
    ['a field without a type', () => [withField(brand, 'code', { required: true }), product(), category()], 'Brand', 'code', /must have required property 'type'/],
    ['a default of the wrong type', () => [withField(brand, 'rank', { type: 'int', default: 'high' }), product(), category()], 'Brand', 'rank', /default "high"/],
    ['a default outside the options', () => [withField(brand, 'size', { type: 'enum', options: ['s'], default: 'xl' }), product(), category()], 'Brand', 'size', /default "xl"/],
    ['maxLength on a text', () => [withField(brand, 'notes', { type: 'text', maxLength: 20 }), product(), category()], 'Brand', 'notes', /maxLength is for varchar/],
    ['searchable on an int', () => [withField(brand, 'rank', { type: 'int', searchable: true }), product(), category()], 'Brand', 'rank', /searchable is for varchar and text/],
    ['a searchable computed field', () => [withField(brand, 'blurb', { type: 'text', computed: true, searchable: true }), product(), category()], 'Brand', 'blurb', /a computed field has no searchable/],
    ['a computed link', () => [withField(brand, 'owner', { type: 'link', entity: 'Brand', computed: true }), product(), category()], 'Brand', 'owner', /a link cannot be computed/],
    ['a computed field with a default', () => [withField(brand, 'score', { type: 'int', computed: true, default: 1 }), product(), category()], 'Brand', 'score', /a computed field has no default/],
    ['a unique linkMultiple', () => [withField(brand, 'products', { type: 'linkMultiple', entity: 'Product', foreign: 'brand', unique: true }), product(), category()], 'Brand', 'products', /cannot be unique/],
  ];
  it.each(cases)('%s', (_what, input, entity, field, pattern) => {
    const message = definitionError(() => loadDefinitions(input()));
    expect(message).toContain(`entity '${entity}'`);
    expect(message).toContain(`'${field}'`);
    expect(message).toMatch(pattern);
  });

  it('a bad entity name', () => {
    const message = definitionError(() => loadDefinitions([{ name: 'brand_x', fields: { name: { type: 'varchar' } } }]));
    expect(message).toContain(`entity 'brand_x': the entity name "brand_x" must match ^[A-Z]`);
  });

  it('several problems of one definition at once', () => {
    const message = definitionError(() => loadDefinitions([{ name: 'Note', fields: { a: { type: 'nope' }, b: { type: 'text', required: 'yes' } } }]));
    expect(message).toContain("entity 'Note': field 'a': type \"nope\" is unknown");
    expect(message).toContain("; field 'b': required must be boolean");
  });

  it('a duplicate entity, also of a known one', () => {
    expect(definitionError(() => loadDefinitions([...good(), brand()]))).toContain("entity 'Brand': is defined twice");
    for (const name of ['User', 'Role', 'ExtensibleEnum', 'ExtensibleEnumOption']) {
      const again = { name, fields: { login: { type: 'varchar' } } };
      expect(definitionError(() => loadDefinitions([again]))).toContain(`entity '${name}': is defined twice`);
    }
  });

  it('an entity of the core, as createEntityApi adds them', async () => {
    const api = createEntityApi({ database: 'sqlite::memory:', entities: [] });
    const core = [...api.schema.entities.keys()];
    await api.close();
    expect(core).toEqual(expect.arrayContaining(['User', 'ExtensibleEnum']));
    for (const name of core) {
      expect(definitionError(() => loadDefinitions([{ name, fields: {} }]))).toContain(`entity '${name}': is defined twice`);
    }
  });

  it('every system field and record key of the runtime model', async () => {
    const api = createEntityApi({ database: 'sqlite::memory:', entities: [{ name: 'Note', fields: {} }] });
    const system = (api.schema.entity('Note')?.fields ?? []).filter((f) => f.system);
    await api.close();
    expect(system.map((f) => f.name)).toEqual(expect.arrayContaining(['id', 'createdAt', 'createdBy']));
    for (const name of new Set(system.flatMap((f) => [f.name, f.key]))) {
      const message = definitionError(() => loadDefinitions([{ name: 'Memo', fields: { [name]: { type: 'varchar' } } }]));
      expect(message).toContain(`entity 'Memo', field '${name}': is a system field name`);
    }
  });

  it('two entities with one table', () => {
    const message = definitionError(() => loadDefinitions([...good(), { name: 'Tag', table: 'brand', fields: {} }]));
    expect(message).toContain("entity 'Tag': its table 'brand' is already the table of entity 'Brand'");
  });
});

describe('readDefinitionsFile', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-defs-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads a JSON file of definitions', () => {
    const file = path.join(dir, 'good.json');
    fs.writeFileSync(file, JSON.stringify({ entities: good() }, null, 2));
    expect(readDefinitionsFile(file).map((d) => d.name)).toEqual(['Brand', 'Product', 'Category']);
  });

  it('puts the file name in front of a definition error', () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify([withType('Brand', 'name', 'string')]));
    const message = definitionError(() => readDefinitionsFile(file));
    expect(message).toBe(`CORE_DEFINITION_INVALID: ${file}: entity 'Brand', field 'name': type "string" is unknown (one of varchar, text, int, float, bool, date, datetime, enum, multiEnum, jsonObject, link, linkMultiple)`);
  });

  it('says which file it cannot read', () => {
    const file = path.join(dir, 'missing.json');
    expect(() => readDefinitionsFile(file)).toThrow(new BootError('CORE_CONFIG_INVALID', `cannot read definitions file '${file}' (ENOENT)`));
  });
});

function withType(entity: string, field: string, type: string) {
  return { name: entity, fields: { [field]: { type } } };
}
