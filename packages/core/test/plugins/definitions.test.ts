import { BootError, createEntityApi, defineEntity, definePlugin, Languages, systemContext, type ApiRecord, type EntityDefinition } from '@entity-records/core';

declare module '@entity-records/core' {
  interface FieldAttributes {
    /** Test option: a copy of the field is added under this name. */
    copyAs?: string;
  }
}

const Note = defineEntity({ name: 'Note', fields: { title: { type: 'varchar', copyAs: 'headline' } } });

/** Adds a field `copyAs` names after each field that has it. */
const copies = definePlugin({
  name: 'copies',
  setup(api) {
    api.addDefinitionAttributes({ field: { copyAs: { type: 'string', pattern: '^[a-z][A-Za-z0-9]*$' } } });
    api.transformDefinitions((definitions) =>
      definitions.map((def) => {
        const fields: EntityDefinition['fields'] = {};
        for (const [name, field] of Object.entries(def.fields)) {
          fields[name] = field;
          if (field.copyAs) fields[field.copyAs] = { type: field.type, maxLength: field.maxLength };
        }
        return { ...def, fields };
      }),
    );
  },
});

/** Builds an instance (no database work) and gives the BootError its construction throws. */
function bootError(build: () => unknown): BootError {
  try {
    build();
  } catch (error) {
    if (error instanceof BootError) return error;
    throw error;
  }
  throw new Error('no error thrown');
}

describe('definition transforms and plugin options', () => {
  it('lets a plugin add fields before the definitions are resolved; they are columns like any other', async () => {
    const api = createEntityApi({ database: 'sqlite::memory:', entities: [Note], plugins: [copies] });
    try {
      const model = api.schema.entity('Note');
      expect(model?.fields.map((f) => f.name)).toEqual(['id', 'title', 'headline', 'createdAt', 'modifiedAt', 'createdBy', 'modifiedBy', 'createdByActor', 'modifiedByActor']);
      await api.ready();
      // headline comes from the plugin, not the definition: the untyped repository takes it.
      const created = await api.repository<ApiRecord>('Note').create(systemContext(), { title: 'a', headline: 'b' });
      expect(created).toMatchObject({ title: 'a', headline: 'b' });
    } finally {
      await api.close();
    }
  });

  it('checks declared options at start-up, naming the entity and field', () => {
    const bad = defineEntity({ name: 'Bad', fields: { title: { type: 'varchar', copyAs: 'Not a name' } } });
    const error = bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [bad], plugins: [copies] }));
    expect(error.code).toBe('CORE_DEFINITION_INVALID');
    expect(error.message).toMatch(/entity 'Bad', field 'title': copyAs must match/);
  });

  it('refuses a plugin that redeclares a core option or an option declared before', () => {
    const core = definePlugin({ name: 'core-clash', setup: (api) => api.addDefinitionAttributes({ field: { maxLength: { type: 'string' } } }) });
    expect(bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [Note], plugins: [core] })).code).toBe('CORE_PLUGIN_INVALID');
    const again = definePlugin({ name: 'again', setup: (api) => api.addDefinitionAttributes({ field: { copyAs: { type: 'string' } } }) });
    const error = bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [Note], plugins: [copies, again] }));
    expect(error).toMatchObject({ code: 'CORE_PLUGIN_INVALID', message: expect.stringMatching(/'copyAs' is declared twice/) });
  });

  it('checks what a transform returns like any definition', () => {
    const clash = definePlugin({
      name: 'clash',
      setup: (api) => api.transformDefinitions((defs) => defs.map((d) => (d.name === 'Note' ? { ...d, fields: { ...d.fields, createdAt: { type: 'varchar' } } } : d))),
    });
    const error = bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [Note], plugins: [copies, clash] }));
    expect(error).toMatchObject({ code: 'CORE_DEFINITION_INVALID', message: expect.stringMatching(/createdAt/) });
  });

  it('refuses unknown response kinds, an applies that is no function and a meta category added twice', () => {
    const kinds = definePlugin({ name: 'kinds', setup: (api) => api.onPresent('*', { kinds: ['list', 'export' as never], present() {} }) });
    expect(bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [], plugins: [kinds] })).code).toBe('CORE_HOOK_NOT_SUPPORTED');
    const applies = definePlugin({ name: 'applies', setup: (api) => api.onPresent('*', { applies: true as never, present() {} }) });
    const error = bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [], plugins: [applies] }));
    expect(error).toMatchObject({ code: 'CORE_PLUGIN_INVALID', message: expect.stringMatching(/onPresent: applies must be a function/) });
    const twice = definePlugin({
      name: 'twice',
      setup(api) {
        api.addMetaCategory('x', { provide: ({ records }) => records.map(() => 1) });
        api.addMetaCategory('x', { provide: ({ records }) => records.map(() => 2) });
      },
    });
    expect(bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [], plugins: [twice] })).code).toBe('CORE_PLUGIN_INVALID');
  });

  it('gives plugins the repositories once the instance is built', async () => {
    let seen: string | undefined;
    const reader = definePlugin({
      name: 'reader',
      setup(api) {
        expect(() => api.repository('Note')).toThrow(BootError);
        api.onReady(() => void (seen = api.repository('Note').model.table));
      },
    });
    const Plain = defineEntity({ name: 'Note', fields: { title: { type: 'varchar' } } });
    const api = createEntityApi({ database: 'sqlite::memory:', entities: [Plain], plugins: [reader] });
    try {
      await api.ready();
      expect(seen).toBe('note');
    } finally {
      await api.close();
    }
  });
});

describe('Languages', () => {
  it('names variants by the code without its underscore, main first', () => {
    const languages = new Languages(['en_US', 'de_DE', 'fr']);
    expect([languages.main, languages.others]).toEqual(['en_US', ['de_DE', 'fr']]);
    expect(['name', 'description'].flatMap((f) => languages.others.map((c) => languages.variant(f, c)))).toEqual(['nameDeDE', 'nameFr', 'descriptionDeDE', 'descriptionFr']);
    expect([languages.resolve('main'), languages.resolve('de_DE'), languages.resolve('de_de'), languages.resolve('it_IT')]).toEqual(['en_US', 'de_DE', undefined, undefined]);
  });

  it('refuses malformed and repeated codes at start-up', () => {
    for (const codes of [['en-US'], ['EN_us'], ['en_US', 'en_US'], ['']]) {
      expect(bootError(() => createEntityApi({ database: 'sqlite::memory:', entities: [], languages: codes })).code).toBe('CORE_CONFIG_INVALID');
    }
  });
});
