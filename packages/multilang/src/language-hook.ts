import { systemContext, type ApiRecord, type EntityModel, type FieldModel, type Languages, type PresentEvent, type PresentHook } from '@entity-records/core';

/** A multilingual field with its variants by language code. */
export interface MultilangField {
  field: FieldModel;
  variants: ReadonlyMap<string, FieldModel>;
}

/** The multilingual fields of every entity type, found once at start-up. */
export class MultilangIndex {
  private readonly byEntity = new Map<string, MultilangField[]>();

  add(model: EntityModel): void {
    const fields = model.fields
      .filter((f) => f.def.isMultilang)
      .map((field) => ({
        field,
        variants: new Map(model.fields.filter((v) => v.def.multilangField === field.name).map((v) => [v.def.multilangLocale as string, v])),
      }));
    if (fields.length) this.byEntity.set(model.name, fields);
  }

  of(entity: string): readonly MultilangField[] {
    return this.byEntity.get(entity) ?? [];
  }
}

const isEmpty = (value: unknown) => value === null || value === undefined || value === '';

/**
 * `<link>Name` / `<link>Names` of links to entity types with a multilingual `name`, in the
 * language asked for where the reader may read that variant of the linked type (else the main
 * name the page's own query read stays): one query per such target entity type for the whole page.
 */
async function localizeLinkNames(event: PresentEvent, index: MultilangIndex, language: string): Promise<void> {
  const { ctx, fields, records, access, repository } = event;
  const reader = ctx.shownTo ?? access;
  const byTarget = new Map<string, FieldModel[]>();
  for (const field of fields) {
    if ((field.type !== 'link' && field.type !== 'linkMultiple') || !field.target) continue;
    const variant = index.of(field.target).find((e) => e.field.name === 'name')?.variants.get(language);
    if (!variant || !reader.readsThroughLink(field.target, variant.name)) continue;
    byTarget.set(field.target, [...(byTarget.get(field.target) ?? []), field]);
  }
  for (const [target, links] of byTarget) {
    const idsOf = (r: ApiRecord, f: FieldModel) => (f.type === 'link' ? [r[f.key]] : ((r[f.key] as unknown[] | null) ?? [])).filter((id): id is string => typeof id === 'string');
    const ids = records.flatMap((r) => links.flatMap((f) => idsOf(r, f)));
    if (ids.length === 0) continue;
    const found = await repository(target).findByIds({ ...systemContext(), language }, ids, { select: ['name'] });
    const nameOf = (id: string) => found.get(id)?.name;
    for (const record of records) {
      for (const f of links) {
        if (f.type === 'link') {
          const name = nameOf(record[f.key] as string);
          if (!isEmpty(name)) record[`${f.name}Name`] = name;
          continue;
        }
        const names = record[`${f.name}Names`] as Record<string, unknown> | null;
        if (names) for (const id of idsOf(record, f)) if (!isEmpty(nameOf(id))) names[id] = nameOf(id);
      }
    }
  }
}

/**
 * The `language` header on lists, single records and linked records: the variants leave the
 * records, and each multilingual field carries its value in the language asked for (the main
 * value where that one is empty), where the caller may read the variant. The variant of the
 * language is read in the page's own query; names of linked records with a multilingual `name`
 * cost one query per target entity type whose variant the caller may read.
 */
export function languageHook(languages: Languages, index: MultilangIndex): PresentHook {
  const wanted = (entry: MultilangField, language: string | undefined) => (language && language !== languages.main ? entry.variants.get(language) : undefined);
  return {
    kinds: ['list', 'read', 'linked'],
    applies: ({ ctx }) => ctx.language !== undefined,
    load: ({ ctx, model, fields }) =>
      index
        .of(model.name)
        .filter((entry) => fields.includes(entry.field))
        .flatMap((entry) => wanted(entry, ctx.language)?.name ?? []),
    async present(event) {
      const { ctx, model, fields, records, access } = event;
      if (!ctx.language) return;
      if (ctx.language !== languages.main) await localizeLinkNames(event, index, ctx.language);
      for (const entry of index.of(model.name)) {
        const variant = wanted(entry, ctx.language);
        // The variant is a field of its own for roles: one the caller may not read shows nothing
        // (nor one a link may not show to the caller a read through a link is made for).
        const readable = variant && (ctx.shownTo ? ctx.shownTo.readsThroughLink(model.name, variant.name) : access.field(model.name, variant.name).read);
        const substitute = variant && fields.includes(entry.field) && readable ? variant : undefined;
        for (const record of records) {
          if (substitute && !isEmpty(record[substitute.key])) record[entry.field.key] = record[substitute.key];
          for (const v of entry.variants.values()) delete record[v.key];
        }
      }
    },
  };
}
