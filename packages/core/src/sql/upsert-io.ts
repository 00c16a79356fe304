import type { Knex } from 'knex';
import { chunks } from '../util/chunks';
import { isStoredField, type EntityModel, type FieldModel, type MultipleLinkField, type StoredField } from '../definition/model';
import type { Dialect } from './dialects/dialect';
import { VERSION_COLUMN } from './schema-sync';
import type { LinkScopes } from './link-rows';
import type { RowFilter } from './record-columns';
import { liveIds } from './join-other-side';
import type { SqlContext } from './sql-context';

const stored = new WeakMap<EntityModel, StoredField[]>();

/** The fields of an entity type that have a column (asked per row, so computed once per type). */
export function storedFields(model: EntityModel): readonly StoredField[] {
  let fields = stored.get(model);
  if (!fields) stored.set(model, (fields = model.fields.filter(isStoredField)));
  return fields;
}

/** The version each record decoded from a stored row had when it was read. */
const versions = new WeakMap<object, number>();

/** The version a record of `decodeStored` was read at (undefined for a record not read from a row). */
export const storedVersion = (record: object): number | undefined => versions.get(record);

/** Raw rows → records keyed as the API keys them (stored values only, no names). */
export function decodeStored(model: EntityModel, dialect: Dialect, rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const fields = storedFields(model);
  return rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const f of fields) record[f.key] = dialect.fromDb(f.type, row[f.column]);
    if (row[VERSION_COLUMN] !== undefined) versions.set(record, Number(row[VERSION_COLUMN]));
    return record;
  });
}

/** Values to look records up by: ids, values of unique fields, tuples of unique indexes. */
export interface KeyLookups {
  ids: Set<string>;
  fields: Map<StoredField, Set<unknown>>;
  indexes: Map<string, unknown[][]>;
}

/** The lookup values of some items: their ids, their non-null unique fields, their complete unique indexes. */
export function keyLookups(model: EntityModel, items: readonly { id?: string; values: ReadonlyMap<FieldModel, unknown> }[]): KeyLookups {
  const lookups: KeyLookups = { ids: new Set(), fields: new Map(), indexes: new Map() };
  const addValue = (v: unknown, f: FieldModel) => {
    if (!f.def.unique || !isStoredField(f) || v === null || v === undefined) return;
    let values = lookups.fields.get(f);
    if (!values) lookups.fields.set(f, (values = new Set()));
    values.add(v);
  };
  for (const { id, values } of items) {
    if (id) lookups.ids.add(id);
    values.forEach(addValue);
    for (const ix of model.uniqueIndexes) {
      const tuple = ix.fields.map((n) => values.get(model.field.get(n) as FieldModel));
      if (!tuple.every((v) => v !== undefined && v !== null)) continue;
      let tuples = lookups.indexes.get(ix.name);
      if (!tuples) lookups.indexes.set(ix.name, (tuples = []));
      tuples.push(tuple);
    }
  }
  return lookups;
}

/**
 * Live records of an entity named by any of the lookup values: one query per key kind (ids, each
 * unique field, each unique index), whatever the batch size.
 */
export async function fetchByKeys(sql: SqlContext, model: EntityModel, lookups: KeyLookups): Promise<Record<string, unknown>[]> {
  const { db, dialect } = sql;
  const rows = new Map<string, Record<string, unknown>>();
  const run = async (apply: (qb: Knex.QueryBuilder) => void) => {
    const qb = db(model.table).select('*').where('deleted', dialect.live as never);
    apply(qb);
    for (const row of await qb) rows.set(row.id as string, row);
  };
  for (const ids of chunks([...lookups.ids], 1000)) await run((qb) => dialect.whereAnyOf(qb, 'id', ids));
  for (const [field, values] of lookups.fields) {
    for (const part of chunks([...values], 1000)) await run((qb) => dialect.whereAnyOf(qb, field.column, part.map((v) => dialect.toDb(field.type, v))));
  }
  for (const [name, tuples] of lookups.indexes) {
    const ix = model.uniqueIndexes.find((u) => u.name === name);
    if (!ix) continue;
    const fields = ix.fields.map((n) => model.field.get(n) as StoredField);
    if (fields.length === 1) {
      const [f] = fields;
      for (const part of chunks(tuples, 1000)) await run((qb) => dialect.whereAnyOf(qb, f.column, part.map((t) => dialect.toDb(f.type, t[0]))));
      continue;
    }
    // OR of ANDs: SQLite limits expression depth to 1000, so keep the chains short.
    for (const part of chunks(tuples, 100)) {
      await run((qb) =>
        void qb.where((w) => {
          for (const tuple of part) w.orWhere((and) => fields.forEach((f, i) => void and.where(f.column, dialect.toDb(f.type, tuple[i]) as never)));
        }),
      );
    }
  }
  return decodeStored(model, dialect, [...rows.values()]);
}

/**
 * The stored records again, locked for the rest of the transaction in id order, as they are now
 * (where the database locks rows). Two upserts of the same records in opposite orders then wait
 * for each other instead of deadlocking; records deleted meanwhile drop out.
 */
export async function lockInOrder(sql: SqlContext, model: EntityModel, records: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  const { db, dialect } = sql;
  if (!dialect.locksRows || records.length === 0) return records;
  const ids = records.map((r) => r.id as string).sort();
  const rows: Record<string, unknown>[] = [];
  for (const part of chunks(ids, 1000)) {
    const qb = db(model.table).select('*').where('deleted', dialect.live as never).orderBy('id').forNoKeyUpdate();
    dialect.whereAnyOf(qb, 'id', part);
    rows.push(...(await qb));
  }
  return decodeStored(model, dialect, rows);
}

/** Current ids of a multiple link for many owners, one query per field (`within`: of the target rows it keeps, a one-to-many link only). */
export async function fetchMultipleLinks(sql: SqlContext, field: MultipleLinkField, { ownerIds, within }: { ownerIds: string[]; within?: RowFilter }): Promise<Map<string, string[]>> {
  const out = new Map(ownerIds.map((id) => [id, [] as string[]]));
  for (const part of chunks(ownerIds, 1000)) {
    for (const r of await linkPairs(sql, field, { owners: part, within })) out.get(r.o)?.push(r.id);
  }
  return out;
}

/** The (owner, linked id) pairs of a multiple link for some owners, with live targets only (see `liveIds`). */
function linkPairs(sql: SqlContext, field: MultipleLinkField, { owners, within }: { owners: string[]; within?: RowFilter }): Promise<{ o: string; id: string }[]> {
  const { db, schema, dialect } = sql;
  if (field.linkKind === 'hasMany') {
    const target = schema.entity(field.target) as EntityModel;
    const qb = db(target.table).select({ o: `${target.table}.${field.foreignColumn}`, id: `${target.table}.id` }).whereIn(`${target.table}.${field.foreignColumn}`, owners).andWhere(`${target.table}.deleted`, dialect.live as never);
    within?.(qb);
    return qb;
  }
  const { table, ownColumn, targetColumn } = field.join;
  return db(table).select({ o: ownColumn, id: targetColumn }).whereIn(ownColumn, owners).whereIn(targetColumn, liveIds(sql, field.target));
}

/**
 * Sets the ids of every multiple link of stored records (`<link>Ids`): one query per link field;
 * `scopes` keeps some one-to-many lists to the records a reader may see (see `LinkScopes`).
 */
export async function loadLinkIds(sql: SqlContext, model: EntityModel, { records, scopes }: { records: Record<string, unknown>[]; scopes?: LinkScopes }): Promise<void> {
  if (records.length === 0) return;
  for (const field of model.fields) {
    if (field.type !== 'linkMultiple') continue;
    const links = await fetchMultipleLinks(sql, field, { ownerIds: records.map((r) => r.id as string), within: scopes?.get(field) });
    for (const r of records) r[field.key] = links.get(r.id as string) ?? [];
  }
}

/** The row a record is stored as: every stored column. */
export function toStoredRow(dialect: Dialect, { model, record }: { model: EntityModel; record: Record<string, unknown> }): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const f of storedFields(model)) row[f.column] = dialect.toDb(f.type, record[f.key] ?? null);
  return row;
}
