import { BootError, createEntityApi, defineEntity, definePlugin, loadDefinitions, type EntityDefinition } from '@entity-records/core';

declare module '@entity-records/core' {
  interface FieldAttributes {
    /** Test option declared by the plugin below. */
    searchWeight?: number;
  }
}

/** Declares `searchWeight` at run time, as it declares it for TypeScript above. */
const search = definePlugin({
  name: 'search',
  setup(api) {
    api.addDefinitionAttributes({ field: { searchWeight: { type: 'integer', minimum: 1 } } });
  },
});

/** The BootError building an instance throws (no database work happens before it). */
function bootError(entities: readonly EntityDefinition[], plugins: Parameters<typeof createEntityApi>[0]['plugins'] = []): BootError {
  try {
    createEntityApi({ database: 'sqlite::memory:', entities, plugins });
  } catch (error) {
    if (error instanceof BootError) return error;
    throw error;
  }
  throw new Error('no error thrown');
}

// The definitions below are typed as EntityDefinition on purpose: defineEntity would refuse them at compile time.
const product = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  ({ name: 'Product', fields: { name: { type: 'varchar' }, ...fields }, ...extra }) as unknown as EntityDefinition;

describe('unknown definition options are start-up errors', () => {
  it.each([
    ['requird', { type: 'varchar', requird: true }, 'required'],
    ['uniqe', { type: 'varchar', uniqe: true }, 'unique'],
    ['maxLenght', { type: 'varchar', maxLenght: 20 }, 'maxLength'],
    ['Default', { type: 'varchar', Default: 'x' }, 'default'],
  ])('a field option %s names the entity, the field and the option meant', (option, field, meant) => {
    const error = bootError([product({ sku: field })]);
    expect(error.code).toBe('CORE_DEFINITION_INVALID');
    expect(error.message).toBe(`CORE_DEFINITION_INVALID: entity 'Product', field 'sku': unknown option '${option}' (did you mean '${meant}'?)`);
  });

  it('searchable is a field option of core, for varchar and text', () => {
    const Doc = defineEntity({ name: 'Doc', fields: { title: { type: 'varchar', searchable: true }, body: { type: 'text', searchable: true } } });
    expect(() => createEntityApi({ database: 'sqlite::memory:', entities: [Doc] }).close()).not.toThrow();
    expect(bootError([product({ sku: { type: 'varchar', serchable: true } })]).message).toMatch(/unknown option 'serchable' \(did you mean 'searchable'\?\)/);
  });

  it('an entity option uniqueIndex names the entity and uniqueIndexes', () => {
    const error = bootError([product({ sku: { type: 'varchar' } }, { uniqueIndex: { sku: ['sku'] } })]);
    expect(error.message).toBe("CORE_DEFINITION_INVALID: entity 'Product': unknown option 'uniqueIndex' (did you mean 'uniqueIndexes'?)");
  });

  it('an option nothing is close to is named without a guess', () => {
    const error = bootError([product({ sku: { type: 'varchar', colour: 'red' } })]);
    expect(error.message).toBe("CORE_DEFINITION_INVALID: entity 'Product', field 'sku': unknown option 'colour'");
  });

  it('knows the options a plugin registers, and only with that plugin', () => {
    const Doc = defineEntity({ name: 'Doc', fields: { title: { type: 'varchar', searchWeight: 3 } } });
    expect(() => createEntityApi({ database: 'sqlite::memory:', entities: [Doc], plugins: [search] }).close()).not.toThrow();
    expect(bootError([Doc]).message).toBe("CORE_DEFINITION_INVALID: entity 'Doc', field 'title': unknown option 'searchWeight'");
    const typo = { name: 'Doc', fields: { title: { type: 'varchar', searchWieght: 3 } } } as unknown as EntityDefinition;
    expect(bootError([typo], [search]).message).toMatch(/field 'title': unknown option 'searchWieght' \(did you mean 'searchWeight'\?\)/);
  });

  it('loadDefinitions checks JSON definitions the same way, with the options plugins declare', () => {
    const json = JSON.stringify([{ name: 'Doc', fields: { title: { type: 'varchar', requird: true, searchWeight: 2 } } }]);
    expect(() => loadDefinitions(json, { source: 'doc.json' })).toThrow(/doc\.json: entity 'Doc', field 'title': unknown option 'requird' \(did you mean 'required'\?\)/);
    const fixed = json.replace('requird', 'required');
    expect(() => loadDefinitions(fixed)).toThrow(/unknown option 'searchWeight'/);
    expect(loadDefinitions(fixed, { attributes: { field: { searchWeight: { type: 'integer' } } } })).toHaveLength(1);
  });
});

describe('access and hooks in a definition', () => {
  it('an unknown hook name names the entity and the hook meant', () => {
    const error = bootError([product({}, { hooks: { beforeCreat: () => undefined } })]);
    expect(error.message).toBe("CORE_DEFINITION_INVALID: entity 'Product': hooks: unknown record hook 'beforeCreat' (did you mean 'beforeCreate'?)");
  });

  it('access and hooks must be functions', () => {
    expect(bootError([product({}, { access: { type: 'equals' } })]).message).toBe(
      "CORE_DEFINITION_INVALID: entity 'Product': access must be a function of the request context (see docs/guide/permissions.md#row-rules)",
    );
    expect(bootError([product({}, { hooks: { afterUpdate: 'log' } })]).message).toBe("CORE_DEFINITION_INVALID: entity 'Product': hooks.afterUpdate must be a function");
  });

  it('a JSON definition cannot carry them', () => {
    expect(() => loadDefinitions(JSON.stringify([{ name: 'Doc', fields: {}, access: 'tenant' }]))).toThrow(/access must be a function/);
  });
});

describe('entity names taken by core or a plugin', () => {
  it('says that Unit is built in', () => {
    const Unit = defineEntity({ name: 'Unit', fields: { code: { type: 'varchar' } } });
    const error = bootError([Unit]);
    expect(error.code).toBe('CORE_DEFINITION_INVALID');
    expect(error.message).toBe("CORE_DEFINITION_INVALID: entity 'Unit' is built in (core defines it, see CORE_ENTITIES): give yours another name");
  });

  it('names the plugin whose entity clashes with the host\'s', () => {
    const Asset = defineEntity({ name: 'Asset', fields: { title: { type: 'varchar' } } });
    const assets = definePlugin({ name: 'assets', setup: (api) => api.addEntity(Asset) });
    expect(bootError([Asset], [assets]).message).toBe("CORE_DEFINITION_INVALID: entity 'Asset' of plugin 'assets' is already defined by the host");
    const job = definePlugin({ name: 'jobs-again', setup: (api) => api.addEntity({ name: 'Job', fields: {} }) });
    expect(bootError([], [job]).message).toBe("CORE_DEFINITION_INVALID: entity 'Job' is built in (core defines it, see CORE_ENTITIES): give the one of plugin 'jobs-again' another name");
  });
});
