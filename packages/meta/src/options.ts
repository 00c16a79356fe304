import { isLinkField, systemContext, type ApiRecord, type EntityModel, type FieldModel, type MetaCategory } from '@entity-records/core';

/** The entity type of list options. */
const OPTION_ENTITY = 'ExtensibleEnumOption';
const OPTION_KEYS = ['code', 'name', 'color', 'sortOrder'] as const;

const OPTION_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    code: { type: 'string' },
    name: { type: ['string', 'null'] },
    color: { type: ['string', 'null'] },
    sortOrder: { type: ['integer', 'null'] },
  },
};

/** `_meta.options`: the option objects of the record's links to list options, by field name. */
export const OPTIONS_SCHEMA = {
  type: 'object',
  description:
    'By field name, for each link of the record to ExtensibleEnumOption whose field the caller may read (whatever the caller may read of ExtensibleEnumOption itself, as the link\'s names show): the option (null when unset) or, for a multiple link, the options in the order of its ids. An option leaves out the fields of ExtensibleEnumOption that the caller\'s roles hide.',
  additionalProperties: { anyOf: [{ ...OPTION_SCHEMA, type: ['object', 'null'] }, { type: 'array', items: OPTION_SCHEMA }] },
};

const optionFields = (model: EntityModel): FieldModel[] => model.fields.filter((f) => !f.system && isLinkField(f) && f.target === OPTION_ENTITY);

const idsOf = (record: ApiRecord, field: FieldModel): string[] => {
  const value = record[field.key];
  if (Array.isArray(value)) return value as string[];
  return typeof value === 'string' ? [value] : [];
};

/**
 * `options`: for every link to `ExtensibleEnumOption` whose field the caller may read, the option
 * objects `{id, code, name, color, sortOrder}`, read for the whole page in one query (names in the
 * language asked for, where the caller may read that variant of the option's name). The options
 * are the record's own links, shown whatever the caller may read of the option type, as its link
 * names are; a field of the option that the caller's roles hide is left out
 * (`UserAccess.readsThroughLink`).
 */
export const optionsCategory: MetaCategory = {
  schema: OPTIONS_SCHEMA,
  load: ({ model }) => optionFields(model).map((f) => f.name),
  async provide({ ctx, model, records, access, repository }) {
    const fields = optionFields(model).filter((f) => access.field(model.name, f.name).read);
    if (fields.length === 0) return records.map(() => undefined);
    const shown = OPTION_KEYS.filter((key) => access.readsThroughLink(OPTION_ENTITY, key));
    const ids = records.flatMap((r) => fields.flatMap((f) => idsOf(r, f)));
    const found = ids.length ? await repository(OPTION_ENTITY).findByIds({ ...systemContext(), language: ctx.language, shownTo: access }, ids, { select: shown.length ? shown : ['id'] }) : new Map();
    const option = (id: string) => {
      const o = found.get(id);
      return o && { id: o.id, ...Object.fromEntries(shown.map((key) => [key, o[key]])) };
    };
    return records.map((record) =>
      Object.fromEntries(
        fields.map((f) => {
          const list = idsOf(record, f).map(option).filter((o) => o !== undefined);
          return [f.name, f.type === 'link' ? (list[0] ?? null) : list];
        }),
      ),
    );
  },
};
