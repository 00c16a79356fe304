import { BootError, createEntityApi, defineEntity, type EntityApiOptions } from '@entity-records/core';
import multilang from '@entity-records/multilang';
import { entities, LANGUAGES } from './fixtures';

/** The BootError that building an instance with these options throws (nothing is opened). */
function bootError(options: Omit<EntityApiOptions, 'database'>): BootError {
  try {
    createEntityApi({ database: 'sqlite::memory:', ...options });
  } catch (error) {
    if (error instanceof BootError) return error;
    throw error;
  }
  throw new Error('no error thrown');
}

describe('multilingual definitions', () => {
  it('needs the instance languages', () => {
    expect(bootError({ entities, plugins: [multilang] })).toMatchObject({ code: 'CORE_CONFIG_INVALID', message: expect.stringMatching(/languages/) });
  });

  it('makes varchar and text fields multilingual, nothing else', () => {
    const Bad = defineEntity({ name: 'Bad', fields: { size: { type: 'int', isMultilang: true } } });
    expect(bootError({ entities: [Bad], plugins: [multilang], languages: LANGUAGES })).toMatchObject({
      code: 'CORE_DEFINITION_INVALID',
      message: expect.stringMatching(/entity 'Bad', field 'size': type int cannot be multilingual/),
    });
    const Typo = defineEntity({ name: 'Typo', fields: { name: { type: 'varchar', isMultilang: 'yes' as never } } });
    expect(bootError({ entities: [Typo], plugins: [multilang], languages: LANGUAGES }).message).toMatch(/field 'name': isMultilang must be boolean/);
  });

  it('refuses a field that has the name of a variant', () => {
    const Twice = defineEntity({ name: 'Twice', fields: { name: { type: 'varchar', isMultilang: true }, nameDeDE: { type: 'varchar' } } });
    expect(bootError({ entities: [Twice], plugins: [multilang], languages: LANGUAGES }).message).toMatch(/field 'nameDeDE': is the de_DE variant of the multilingual field 'name'/);
  });

  it('makes ExtensibleEnumOption.name multilingual by default, and the fields option says which others', async () => {
    const withDefault = createEntityApi({ database: 'sqlite::memory:', entities, plugins: [multilang], languages: LANGUAGES });
    const none = createEntityApi({ database: 'sqlite::memory:', entities, plugins: [[multilang, { fields: {} }]], languages: LANGUAGES });
    const brand = createEntityApi({ database: 'sqlite::memory:', entities, plugins: [[multilang, { fields: { Brand: ['name'] } }]], languages: ['en_US', 'de_DE'] });
    try {
      expect(withDefault.schema.entity('ExtensibleEnumOption')?.field.has('nameFrFR')).toBe(true);
      expect(none.schema.entity('ExtensibleEnumOption')?.field.has('nameDeDE')).toBe(false);
      expect(brand.schema.entity('Brand')?.field.get('nameDeDE')?.def).toMatchObject({ multilangField: 'name', multilangLocale: 'de_DE' });
      // unique applies to the main value
      expect(brand.schema.entity('Brand')?.field.get('nameDeDE')?.def.unique).toBeUndefined();
    } finally {
      for (const api of [withDefault, none, brand]) await api.close();
    }
    expect(bootError({ entities, plugins: [[multilang, { fields: { Nope: ['name'] } }]], languages: LANGUAGES }).code).toBe('CORE_CONFIG_INVALID');
    expect(bootError({ entities, plugins: [[multilang, { fields: { Brand: ['title'] } }]], languages: LANGUAGES }).code).toBe('CORE_DEFINITION_INVALID');
  });

  it('adds no variants on an instance with only a main language', async () => {
    const api = createEntityApi({ database: 'sqlite::memory:', entities, plugins: [multilang], languages: ['de_DE'] });
    try {
      expect(api.schema.entity('Product')?.fields.map((f) => f.name).filter((n) => /^(name|description)/.test(n))).toEqual(['name', 'description']);
    } finally {
      await api.close();
    }
  });
});
