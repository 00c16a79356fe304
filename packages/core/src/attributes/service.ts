import { generationOf } from '../generations';
import { stillLinked } from '../errors';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, SchemaModel } from '../definition/normalize';
import type { AttributeStore } from '../sql/attribute-store';
import type { Connection, Database, Transaction } from '../sql/database';
import type { PurgedValues } from '../sql/link-store';
import type { SqlContext } from '../sql/sql-context';
import { applyPlan, linkField } from './apply-plan';
import { checkClashes } from './attribute-clashes';
import { languageSuffix, type AttributeDef, type LoadedValue } from './attribute-def';
import { buildListQuery } from '../sql/attribute-query';
import { flattenInto, groupValues, linkTargets, valueItem, type ValueView } from './present';
import type { AttributeListParams, AttributeListQuery, PreparedAttributeWrite, RecordAttributes } from './record-attributes';
import { namesIn, planFlattenedBody, splitFlattenedBody } from './flattened-body';
import type { WritePlan } from './write-plan';

/** How generation B shows attributes without `Flatten-Attributes: true`. */
export type V1AttributesFormat = 'none' | 'nested';

export interface AttributeServiceOptions {
  database: Database;
  schema: SchemaModel;
  store: AttributeStore;
  /** Instance languages, main first. */
  languages: readonly string[];
  v1AttributesFormat: V1AttributesFormat;
}

/** Attributes of records: values shown per request, written with records, filtered and sorted in SQL. */
export class AttributeService implements RecordAttributes {
  constructor(readonly options: AttributeServiceOptions) {}

  get store(): AttributeStore {
    return this.options.store;
  }

  private get db(): Database['knex'] {
    return this.options.database.knex;
  }

  /** The languages of the instance with the suffix of their value keys (`de_DE` → `DeDE`), main excluded. */
  get variantLanguages(): { code: string; suffix: string }[] {
    return this.options.languages.slice(1).map((code) => ({ code, suffix: languageSuffix(code) }));
  }

  /**
   * How values read in this request: the `language` asked for (any instance language, the main
   * one included: `main` arrives resolved to its code), link names, and whether attribute labels
   * read in that language (where the caller may read that variant of `Attribute.name`).
   */
  view(ctx: RequestContext, linkNames: ReadonlyMap<string, string | null> = new Map()): ValueView {
    const { languages } = this.options;
    const language = this.language(ctx);
    const translated = this.translation(ctx);
    return { languages, language, linkNames, labelInLanguage: translated !== undefined && this.shows(ctx)('Attribute', `name${languageSuffix(translated)}`) };
  }

  /** The instance language the request asks for, if any (the main one included). */
  private language(ctx: RequestContext): string | undefined {
    return ctx.language && this.options.languages.includes(ctx.language) ? ctx.language : undefined;
  }

  /**
   * Whether the caller may see a field of a record it sees through a link (the variant of a
   * linked record's or an attribute's name in a language; `UserAccess.readsThroughLink`). The
   * system sees every one; a caller whose rights the context does not carry yet, none.
   */
  private shows(ctx: RequestContext): (entity: string, field: string) => boolean {
    const { access } = ctx;
    if (access) return (entity, field) => access.readsThroughLink(entity, field);
    return () => !ctx.user;
  }

  /** The non-main language values and link names read in, if the request asks for one. */
  translation(ctx: RequestContext): string | undefined {
    const language = this.language(ctx);
    return language === this.options.languages[0] ? undefined : language;
  }

  /**
   * Values of records with the names of linked records (in the language the caller asks for, a
   * non-main one, when their name has a variant in it that the caller may read): one query, plus
   * one when links are among them.
   */
  async loadValues(
    db: Connection,
    model: EntityModel,
    wanted: { ctx: RequestContext; ids: readonly string[]; only?: readonly AttributeDef[] },
  ): Promise<{ values: LoadedValue[]; linkNames: Map<string, string | null> }> {
    const values = await this.store.load(db, model, { recordIds: wanted.ids, attributeIds: wanted.only?.map((a) => a.id) });
    const targets = linkTargets(values);
    if (targets.size === 0) return { values, linkNames: new Map() };
    return { values, linkNames: await this.store.linkNames(db, targets, { language: this.translation(wanted.ctx), shows: this.shows(wanted.ctx) }) };
  }

  async listQuery(_ctx: RequestContext, model: EntityModel, params: AttributeListParams): Promise<AttributeListQuery | undefined> {
    if (!model.def.hasAttributes) return undefined;
    return buildListQuery({ store: this.store, db: this.db, dialect: this.options.database.dialect }, model, params);
  }

  /** Which format this request reads attributes in, if any. */
  private format(ctx: RequestContext): 'flat' | 'nested' | undefined {
    if (ctx.flattenAttributes) return 'flat';
    // Work of the server itself (no generation) reads no attributes unasked.
    return ctx.generation && generationOf(ctx).attributes.nestedFormat && this.options.v1AttributesFormat === 'nested' ? 'nested' : undefined;
  }

  async present(ctx: RequestContext, { model, records }: { model: EntityModel; records: ApiRecord[] }, how: { mode: 'list' | 'single'; query?: AttributeListQuery }): Promise<void> {
    const format = this.format(ctx);
    if (!format || !model.def.hasAttributes || records.length === 0) return;
    // Single reads show every attribute the record has; lists those asked for (nested lists: all).
    const shown = how.mode === 'single' || format === 'nested' ? (how.query?.shown ?? 'all') : how.query?.shown;
    const { values, linkNames } = shown
      ? await this.loadValues(this.db, model, { ctx, ids: records.map((r) => r.id), only: shown === 'all' ? undefined : shown })
      : { values: [], linkNames: new Map<string, string | null>() };
    const view = this.view(ctx, linkNames);
    const byRecord = groupValues(values);
    for (const record of records) {
      const attributes = byRecord.get(record.id)?.values() ?? [];
      if (format === 'flat') flattenInto(record, attributes, { view, full: how.mode === 'single' });
      else record.attributesValues = [...attributes].map((entry) => valueItem(entry, view));
    }
  }

  async prepareWrite(ctx: RequestContext, model: EntityModel, body: Record<string, unknown>): Promise<PreparedAttributeWrite | undefined> {
    if (!ctx.flattenAttributes || !model.def.hasAttributes) return undefined;
    const generation = generationOf(ctx);
    const split = splitFlattenedBody(model, body, generation);
    const names = namesIn(split, this.variantLanguages.map((l) => l.suffix));
    if (names.length === 0) return { body: split.data };
    const found = await this.store.attributes(this.db, model.name, names);
    const plan = planFlattenedBody(split, body, { found, model, generation, languages: this.variantLanguages });
    return this.prepared(model, { body: split.data, plan });
  }

  /** A write of planned values, applied inside the transaction of the record's write. */
  prepared(model: EntityModel, { body, plan }: { body: Record<string, unknown>; plan: WritePlan }): PreparedAttributeWrite {
    const { schema, database } = this.options;
    const linkObjects = [...plan.changes.values()].flatMap((c) => (c.linkObject ? [{ field: linkField(c.attribute), object: c.linkObject, path: c.path }] : []));
    return { body, linkObjects, apply: (trx, recordId, rules) => applyPlan({ trx, store: this.store, schema, dialect: database.dialect, model, recordId, rules }, plan) };
  }

  /**
   * A restored attribute gives its record keys back, as a create would give them: 400 when another
   * live attribute of its entity type answers to one of them meanwhile (its code as a unit field of
   * another, one of its unit or language fields as another's code).
   */
  async onRestore(trx: Transaction, model: EntityModel, id: string): Promise<void> {
    if (model.name !== 'Attribute') return;
    for (const owner of this.options.schema.entities.values()) {
      if (!owner.def.hasAttributes) continue;
      const restored = (await this.store.attributes(trx, owner.name, [id])).find((a) => a.id === id);
      if (restored) await checkClashes({ store: this.store, db: trx, languages: this.options.languages }, { data: { ...restored } });
    }
  }

  async purging(sql: SqlContext<Transaction>, model: EntityModel, id: string): Promise<PurgedValues | undefined> {
    // The measure of an attribute is fixed once it exists (its values carry units of it): one
    // that lost it would read its values without their units, and a restore would bring it back so.
    if (model.name === 'Measure' && (await this.store.measureInUse(sql.db, id))) throw stillLinked(model.name, id, { entity: 'Attribute', field: 'measure' });
    return this.store.purging(sql, model, id);
  }

  async onPermanentDelete(trx: Transaction, model: EntityModel, id: string): Promise<void> {
    if (model.def.hasAttributes) await this.store.removeRecord(trx, model, id);
  }
}
