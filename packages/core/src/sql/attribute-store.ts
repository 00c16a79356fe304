import type { Knex } from 'knex';
import { attributeKey, languageSuffix, removedDiff, valueKey, type AttributeDef, type LoadedValue, type StoredValue } from '../attributes/attribute-def';
import type { AttributeType } from '../attributes/entities';
import type { FieldType } from '../declarations';
import type { EntityModel, SchemaModel } from '../definition/normalize';
import { chunks } from '../util/chunks';
import { uuidv7 } from '../util/uuid';
import { STORED_TYPE, VALUE_COLUMN, VALUE_COLUMNS, valueTableName } from './attribute-table';
import type { Database } from './database';
import type { Dialect } from './dialects/dialect';
import { quoteName } from './dialects/shared';
import type { PurgedValues, ValueLoss } from './link-store';
import { runText } from './prepared';
import { nameSql } from './read-query';
import type { SqlContext } from './sql-context';

/** The attribute fields a value read needs, by field name. */
const ATTRIBUTE_FIELDS = ['code', 'name', 'entityType', 'type', 'measure', 'isMultilang', 'isRequired', 'isReadOnly', 'isProtected', 'options', 'linkEntity', 'min', 'max'];

/** The value table of an entity type, inside a write's transaction. */
interface ValueTable {
  /** The transaction of the write (reads may run on the pool). */
  trx: Knex | Knex.Transaction;
  model: EntityModel;
}

/** One record's rows in the value table of its entity type. */
interface RecordValues extends ValueTable {
  recordId: string;
}

/** A value to store: one attribute in one language ('' for the main value), with its unit. */
export interface ValueWrite {
  attribute: AttributeDef;
  language: string;
  value: unknown;
  unitId: string | null;
}

/** Who link names are read for: the language asked for (a non-main one), and which variants the reader may see. */
export interface LinkNameReader {
  language?: string;
  /** Whether the reader may see `field` (one that names a record, a variant of `name`) of a record of `entity` it sees through a link. */
  shows(entity: string, field: string): boolean;
}

/**
 * The values of one entity type a permanent delete changes: those of the removed attribute
 * (`whole`), those of these link attributes and those of these attributes with a measure (whose
 * unit is the removed one) that `where` keeps.
 */
interface PurgedHolding {
  whole?: AttributeDef;
  attributes: Map<string, AttributeDef>;
  measured: Map<string, AttributeDef>;
  where: (qb: Knex.QueryBuilder) => void;
}

/** Reads and writes attribute values; every table and column name comes from the definitions. */
export class AttributeStore {
  private readonly attribute: EntityModel;
  private readonly unit: EntityModel;

  constructor(
    private readonly database: Database,
    private readonly schema: SchemaModel,
    private readonly languages: readonly string[],
  ) {
    this.attribute = schema.entity('Attribute') as EntityModel;
    this.unit = schema.entity('Unit') as EntityModel;
  }

  private get dialect(): Dialect {
    return this.database.dialect;
  }

  /** Columns of the Attribute table aliased `a_<field>`, with the name's language variants when it has them. */
  private attributeColumns(alias: string): Record<string, string> {
    const columns: Record<string, string> = { a_id: `${alias}.id` };
    const names = [...ATTRIBUTE_FIELDS, ...this.languages.slice(1).map((l) => `name${languageSuffix(l)}`)];
    for (const name of names) {
      const field = this.attribute.field.get(name);
      if (field?.column) columns[`a_${name}`] = `${alias}.${field.column}`;
    }
    return columns;
  }

  private toAttribute(row: Record<string, unknown>): AttributeDef {
    const from = (type: FieldType, key: string) => this.dialect.fromDb(type, row[key]);
    const names: Record<string, string | null> = {};
    for (const l of this.languages.slice(1)) {
      const key = `a_name${languageSuffix(l)}`;
      if (key in row) names[l] = (row[key] as string | null) ?? null;
    }
    return {
      id: row.a_id as string,
      code: (row.a_code as string | null) ?? null,
      name: (row.a_name as string | null) ?? null,
      names,
      entityType: row.a_entityType as string,
      type: row.a_type as AttributeType,
      measureId: (row.a_measure as string | null) ?? null,
      isMultilang: from('bool', 'a_isMultilang') === true,
      isRequired: from('bool', 'a_isRequired') === true,
      isReadOnly: from('bool', 'a_isReadOnly') === true,
      isProtected: from('bool', 'a_isProtected') === true,
      options: (from('multiEnum', 'a_options') as string[] | null) ?? null,
      linkEntity: (row.a_linkEntity as string | null) ?? null,
      min: (row.a_min as number | null) ?? null,
      max: (row.a_max as number | null) ?? null,
    };
  }

  /**
   * Live attributes of an entity type named by id or code (all of them when `names` is undefined),
   * in id order. Any number of names: past a thousand they are looked up a thousand at a time
   * (each part in id order), within the parameters a statement may bind.
   */
  async attributes(db: Knex | Knex.Transaction, entityType: string, names?: readonly string[]): Promise<AttributeDef[]> {
    if (!names) return this.attributesNamed(db, entityType);
    // No id or code holds a NUL, which PostgreSQL cannot even compare (a `where` in JSON form can name one).
    const wanted = [...new Set(names)].filter((name) => !name.includes('\u0000'));
    const found = new Map<string, AttributeDef>();
    for (const part of chunks(wanted, 1000)) for (const attribute of await this.attributesNamed(db, entityType, part)) found.set(attribute.id, attribute);
    return [...found.values()];
  }

  private async attributesNamed(db: Knex | Knex.Transaction, entityType: string, names?: readonly string[]): Promise<AttributeDef[]> {
    const code = this.attribute.field.get('code')?.column as string;
    const qb = db({ a: this.attribute.table })
      .select(this.attributeColumns('a'))
      .where('a.deleted', this.dialect.live as never)
      .andWhere(`a.${this.attribute.field.get('entityType')?.column as string}`, entityType)
      .orderBy('a.id');
    if (names) qb.andWhere((w) => w.whereIn('a.id', [...names]).orWhereIn(`a.${code}`, [...names]));
    return ((await qb) as Record<string, unknown>[]).map((row) => this.toAttribute(row));
  }

  /**
   * The values of some records (every language), with their live attributes and unit names, in
   * one query whatever the number of records.
   */
  async load(
    db: Knex | Knex.Transaction,
    model: EntityModel,
    { recordIds, attributeIds }: { recordIds: readonly string[]; attributeIds?: readonly string[] },
  ): Promise<LoadedValue[]> {
    if (recordIds.length === 0 || attributeIds?.length === 0) return [];
    const table = valueTableName(model);
    const unitName = nameSql(db, this.unit, { alias: 'u' }) as unknown as string;
    const qb = db({ v: table })
      .join({ a: this.attribute.table }, (j) => j.on('a.id', '=', 'v.attribute_id').andOn('a.deleted', '=', db.raw('?', [this.dialect.live])))
      .leftJoin({ u: this.unit.table }, (j) => j.on('u.id', '=', 'v.unit_id').andOn('u.deleted', '=', db.raw('?', [this.dialect.live])))
      .select({ v_id: 'v.id', v_record: 'v.record_id', v_language: 'v.language', v_unit: 'v.unit_id', v_unit_name: unitName })
      .select(Object.fromEntries(VALUE_COLUMNS.map((c) => [`v_${c}`, `v.${c}`])))
      .select(this.attributeColumns('a'))
      .whereIn('v.record_id', [...recordIds])
      .orderBy([{ column: 'v.record_id' }, { column: 'a.id' }, { column: 'v.language' }]);
    if (attributeIds) qb.whereIn('v.attribute_id', [...attributeIds]);
    const rows = (await qb) as Record<string, unknown>[];
    return rows.map((row) => {
      const attribute = this.toAttribute(row);
      return {
        id: row.v_id as string,
        recordId: row.v_record as string,
        attributeId: attribute.id,
        language: row.v_language as string,
        value: this.decode(attribute.type, row[`v_${VALUE_COLUMN[attribute.type]}`]),
        unitId: (row.v_unit as string | null) ?? null,
        unitName: (row.v_unit_name as string | null) ?? null,
        attribute,
      };
    });
  }

  private decode(type: AttributeType, value: unknown): unknown {
    const decoded = this.dialect.fromDb(STORED_TYPE[type], value);
    if (type === 'float' && typeof decoded === 'string') return Number(decoded);
    return decoded;
  }

  /**
   * Names of linked records, `Entity:id` → name, in one query for every target entity type; in
   * the reader's `language` where the target's `name` has a variant in it that is not empty and
   * the reader may see that variant, else the main name.
   */
  async linkNames(
    db: Knex | Knex.Transaction,
    wanted: ReadonlyMap<string, ReadonlySet<string>>,
    reader: LinkNameReader,
  ): Promise<Map<string, string | null>> {
    const parts: Knex.QueryBuilder[] = [];
    for (const [entity, ids] of wanted) {
      const target = this.schema.entity(entity);
      if (!target || ids.size === 0) continue;
      parts.push(
        db(target.table)
          .select({ e: db.raw('?', [entity]) as unknown as string, id: 'id', n: this.nameIn(db, target, reader) as unknown as string })
          .whereIn('id', [...ids])
          .andWhere('deleted', this.dialect.live as never),
      );
    }
    const names = new Map<string, string | null>();
    if (parts.length === 0) return names;
    const [first, ...rest] = parts;
    // Not wrapped: SQLite refuses parenthesised parts of a compound select.
    if (rest.length) first.unionAll(rest, false);
    for (const row of (await first) as { e: string; id: string; n: string | null }[]) names.set(`${row.e}:${row.id}`, row.n);
    return names;
  }

  /**
   * The name of a record of `target` (its own table): the language variant of `name` (`nameDeDE`,
   * as multilingual fields name them) when set and the reader may see it, else its name (by the
   * fields the reader may see: `nameColumns`).
   */
  private nameIn(db: Knex | Knex.Transaction, target: EntityModel, { language, shows }: LinkNameReader): Knex.Raw {
    const name = nameSql(db, target, { alias: target.table, shows });
    const variant = language && target.field.has('name') ? target.field.get(`name${languageSuffix(language)}`) : undefined;
    if (!variant?.column || !shows(target.name, variant.name)) return name;
    return db.raw(`coalesce(nullif(??, ''), ?)`, [`${target.table}.${variant.column}`, name]);
  }

  /** The stored rows (every language) of some attributes of one record, whatever their attribute's state. */
  async stored({ trx, model, recordId }: RecordValues, attributes: readonly AttributeDef[]): Promise<StoredValue[]> {
    if (attributes.length === 0) return [];
    const byId = new Map(attributes.map((a) => [a.id, a]));
    const rows = (await trx(valueTableName(model))
      .select(['id', 'attribute_id', 'language', 'unit_id', ...VALUE_COLUMNS])
      .where('record_id', recordId)
      .whereIn('attribute_id', [...byId.keys()])) as Record<string, unknown>[];
    return rows.map((row) => {
      const a = byId.get(row.attribute_id as string) as AttributeDef;
      return {
        id: row.id as string,
        recordId,
        attributeId: a.id,
        language: row.language as string,
        value: this.decode(a.type, row[VALUE_COLUMN[a.type]]),
        unitId: (row.unit_id as string | null) ?? null,
      };
    });
  }

  /** The column values of a value row. */
  private columns({ attribute, value, unitId }: Omit<ValueWrite, 'language'>): Record<string, unknown> {
    return { [VALUE_COLUMN[attribute.type]]: this.dialect.toDb(STORED_TYPE[attribute.type], value), unit_id: unitId };
  }

  /**
   * Inserts value rows. A row another request inserted meanwhile is overwritten (`keep: false`,
   * the last write wins) or left as it is (`keep: true`, for attributes added without value).
   */
  async insert({ trx, model, recordId }: RecordValues, rows: readonly ValueWrite[], { keep = false }: { keep?: boolean } = {}): Promise<void> {
    if (rows.length === 0) return;
    const conflict = trx(valueTableName(model))
      .insert(rows.map((r) => ({ id: uuidv7(), record_id: recordId, attribute_id: r.attribute.id, language: r.language, ...this.columns(r) })))
      .onConflict(['record_id', 'attribute_id', 'language']);
    await (keep ? conflict.ignore() : conflict.merge([...VALUE_COLUMNS, 'unit_id']));
  }

  /** Rewrites one stored row (its language stays). */
  async update({ trx, model }: ValueTable, rowId: string, write: Omit<ValueWrite, 'language'>): Promise<void> {
    await trx(valueTableName(model)).update(this.columns(write)).where('id', rowId);
  }

  /** Removes some attributes (every language) from a record. */
  async remove({ trx, model, recordId }: RecordValues, attributeIds: readonly string[]): Promise<void> {
    if (attributeIds.length === 0) return;
    await trx(valueTableName(model)).delete().where('record_id', recordId).whereIn('attribute_id', [...attributeIds]);
  }

  /** After a record is removed for good: its values go too. */
  async removeRecord(trx: Knex.Transaction, model: EntityModel, recordId: string): Promise<void> {
    await trx(valueTableName(model)).delete().where('record_id', recordId);
  }

  /**
   * The attribute values a permanent delete of `id`, a record of `removed`, changes besides the
   * removed record's own: every value of a removed attribute, the values of link attributes
   * that name the removed record, and the values whose unit is a removed unit; of attributes
   * deleted or not (the stored values change, as the stored links of a deleted record do). One
   * statement finds the attributes; none answers undefined.
   */
  async purging(sql: SqlContext<Knex.Transaction>, removed: EntityModel, id: string): Promise<PurgedValues | undefined> {
    const trx = sql.db;
    const column = (name: string) => `a.${this.attribute.field.get(name)?.column as string}`;
    const rows = (await trx({ a: this.attribute.table })
      .select(this.attributeColumns('a'))
      .where((w) => {
        w.where((links) => links.where(column('linkEntity'), removed.name).whereIn(column('type'), ['link', 'linkMultiple']));
        if (removed === this.attribute) w.orWhere('a.id', id);
        // A unit is carried by the values of the attributes of its measure.
        if (removed === this.unit) w.orWhereIn(column('measure'), trx(this.unit.table).select(this.unit.field.get('measure')?.column as string).where('id', id));
      })) as Record<string, unknown>[];
    const held = new Map<EntityModel, PurgedHolding>();
    for (const a of rows.map((row) => this.toAttribute(row))) {
      const owner = this.schema.entity(a.entityType);
      if (!owner?.def.hasAttributes) continue;
      const holding = held.get(owner) ?? { attributes: new Map<string, AttributeDef>(), measured: new Map<string, AttributeDef>(), where: () => undefined };
      if (removed === this.attribute && a.id === id) holding.whole = a;
      else if (removed === this.unit) holding.measured.set(a.id, a);
      else holding.attributes.set(a.id, a);
      held.set(owner, holding);
    }
    if (held.size === 0) return undefined;
    for (const holding of held.values()) {
      const of = (type: AttributeDef['type']) => [...holding.attributes.values()].filter((a) => a.type === type).map((a) => a.id);
      const [single, multiple] = [of('link'), of('linkMultiple')];
      const whole = holding.whole?.id;
      const measured = [...holding.measured.keys()];
      holding.where = (qb) =>
        qb.where((w) => {
          if (whole) w.orWhere('attribute_id', whole);
          if (measured.length) w.orWhere((x) => x.whereIn('attribute_id', measured).andWhere('unit_id', id));
          if (single.length) w.orWhere((x) => x.whereIn('attribute_id', single).andWhere('value_text', id));
          if (multiple.length) w.orWhere((x) => x.whereIn('attribute_id', multiple).andWhereRaw(this.dialect.jsonArrayAnyOf(quoteName('value_json'), 1), [id]));
        });
    }
    return {
      holders: new Map([...held].map(([model, { where }]) => [model, () => trx(valueTableName(model)).select('record_id').modify(where)])),
      clear: (live) => this.clearPurged(sql, { id, held, live }),
    };
  }

  /**
   * Clears the values `purging` found, of every record: those of a removed attribute go, a link
   * that named the removed record becomes null, a multiple link loses its id (no id left is no
   * value, as its write stores it), a value whose unit was removed keeps its number without a
   * unit. Answers, of the `live` records, what changed as their writes log it (an `Update` that
   * removes the attribute, an `Unrelate` of the links and units). Set-based: per
   * entity type, one statement reads the values, one removes those of the attribute, one clears
   * the links, one per recordset rewrites the multiple links.
   */
  private async clearPurged(
    sql: SqlContext<Knex.Transaction>,
    { id, held, live }: { id: string; held: ReadonlyMap<EntityModel, PurgedHolding>; live: ReadonlyMap<EntityModel, readonly string[]> },
  ): Promise<Map<EntityModel, Map<string, ValueLoss>>> {
    const { db: trx, dialect } = sql;
    const losses = new Map<EntityModel, Map<string, ValueLoss>>();
    for (const [model, { whole, attributes, measured, where }] of held) {
      const table = valueTableName(model);
      const rows = (await trx(table).select(['id', 'record_id', 'attribute_id', 'language', 'unit_id', ...VALUE_COLUMNS]).modify(where)) as Record<string, unknown>[];
      const alive = new Set(live.get(model));
      const lost = new Map<string, ValueLoss>();
      const rewritten: Record<string, unknown>[] = [];
      const removed = new Map<string, StoredValue[]>();
      let single = false;
      for (const row of rows) {
        const recordId = row.record_id as string;
        if (whole && row.attribute_id === whole.id) {
          const value = { id: row.id as string, recordId, attributeId: whole.id, language: row.language as string, value: this.decode(whole.type, row[VALUE_COLUMN[whole.type]]), unitId: (row.unit_id as string | null) ?? null };
          if (alive.has(recordId)) removed.set(recordId, [...(removed.get(recordId) ?? []), value]);
          continue;
        }
        const carrier = measured.get(row.attribute_id as string);
        if (carrier) {
          // A value whose unit is the removed one keeps its number, without a unit.
          if (!alive.has(recordId)) continue;
          const loss = lost.get(recordId) ?? { action: 'Unrelate', diff: {} };
          loss.diff[`${attributeKey(carrier)}UnitId`] = { was: id, became: null };
          lost.set(recordId, loss);
          continue;
        }
        const a = attributes.get(row.attribute_id as string) as AttributeDef;
        let became: unknown = null;
        let was: unknown = id;
        if (a.type === 'linkMultiple') {
          was = (this.decode(a.type, row.value_json) as string[] | null) ?? [];
          const left = (was as string[]).filter((x) => x !== id);
          became = left.length ? left : null;
          rewritten.push({ id: row.id, value_json: became });
        } else single = true;
        if (!alive.has(recordId)) continue;
        const loss = lost.get(recordId) ?? { action: 'Unrelate', diff: {} };
        loss.diff[valueKey(a)] = { was, became };
        lost.set(recordId, loss);
      }
      for (const [recordId, values] of removed) {
        const loss = lost.get(recordId) ?? { action: 'Update', diff: {} };
        removedDiff(loss.diff, whole as AttributeDef, values);
        lost.set(recordId, loss);
      }
      if (whole) await trx(table).delete().where('attribute_id', whole.id);
      if (measured.size) await trx(table).update({ unit_id: null }).whereIn('attribute_id', [...measured.keys()]).andWhere('unit_id', id);
      if (single) {
        const ids = [...attributes.values()].filter((a) => a.type === 'link').map((a) => a.id);
        await trx(table).update({ value_text: null }).whereIn('attribute_id', ids).andWhere('value_text', id);
      }
      for (const part of chunks(rewritten, dialect.recordsetRows(2))) {
        const set = dialect.recordset(part, { table, columns: ['id', 'value_json'], jsonColumns: ['value_json'] });
        const text = () => `update ${quoteName(table)} as t set ${quoteName('value_json')} = ${set.value('value_json')} from ${set.from} where t.id = ${set.value('id')}`;
        await runText(sql, { method: 'count', key: `unlink:${table}:${set.key}`, text }, set.bindings);
      }
      losses.set(model, lost);
    }
    return losses;
  }

  /** Whether an attribute, live or in the bin, has the measure `measureId`. */
  async measureInUse(trx: Knex.Transaction, measureId: string): Promise<boolean> {
    return (await trx(this.attribute.table).first('id').where(this.attribute.field.get('measure')?.column as string, measureId)) !== undefined;
  }

  /** Live units by id → their measure. */
  async unitMeasures(trx: Knex.Transaction, unitIds: readonly string[]): Promise<Map<string, string>> {
    if (unitIds.length === 0) return new Map();
    const measure = this.unit.field.get('measure')?.column as string;
    const rows = await trx(this.unit.table).select({ id: 'id', m: measure }).whereIn('id', [...unitIds]).andWhere('deleted', this.dialect.live as never);
    return new Map(rows.map((r: { id: string; m: string }) => [r.id, r.m]));
  }

  /** The default unit of each measure (the first unit marked `isDefault`). */
  async defaultUnits(trx: Knex.Transaction, measureIds: readonly string[]): Promise<Map<string, string>> {
    if (measureIds.length === 0) return new Map();
    const measure = this.unit.field.get('measure')?.column as string;
    const isDefault = this.unit.field.get('isDefault')?.column as string;
    const rows = await trx(this.unit.table)
      .select({ id: 'id', m: measure })
      .whereIn(measure, [...measureIds])
      .andWhere(isDefault, this.dialect.toDb('bool', true) as never)
      .andWhere('deleted', this.dialect.live as never)
      .orderBy('id');
    const defaults = new Map<string, string>();
    for (const r of rows as { id: string; m: string }[]) if (!defaults.has(r.m)) defaults.set(r.m, r.id);
    return defaults;
  }

  /**
   * Joins one attribute's main value to a query of the entity's records under `alias` (at most
   * one row per record: the value table is unique by record, attribute and language).
   */
  joinValue(qb: Knex.QueryBuilder, model: EntityModel, { alias, attributeId }: { alias: string; attributeId: string }): void {
    const db = this.database.knex;
    qb.leftJoin({ [alias]: valueTableName(model) }, (j) =>
      j
        .on(`${alias}.record_id`, '=', `${model.table}.id`)
        .andOn(`${alias}.attribute_id`, '=', db.raw('?', [attributeId]))
        .andOn(`${alias}.language`, '=', db.raw('?', [''])),
    );
  }
}
