import type { Knex } from 'knex';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/normalize';
import type { Dialect } from './dialects/dialect';
import { live } from './read-query';
import type { Repository } from './repository';
import type { RecordState } from './upsert-plan';

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Largest number of bound values one statement gets (SQLite allows 32766, PostgreSQL 65535). */
const MAX_BINDINGS = 30_000;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const stored = new WeakMap<EntityModel, FieldModel[]>();

/** The fields of an entity type that have a column (asked per row, so computed once per type). */
export function storedFields(model: EntityModel): readonly FieldModel[] {
  let fields = stored.get(model);
  if (!fields) stored.set(model, (fields = model.fields.filter((f) => f.column)));
  return fields;
}

/** Raw rows → records keyed as the API keys them (stored values only, no names). */
export function decodeStored(model: EntityModel, dialect: Dialect, rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const fields = storedFields(model);
  return rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const f of fields) record[f.key] = dialect.fromDb(f.type, row[f.column as string]);
    return record;
  });
}

/** Values to look records up by: ids, values of unique fields, tuples of unique indexes. */
export interface KeyLookups {
  ids: Set<string>;
  fields: Map<FieldModel, Set<unknown>>;
  indexes: Map<string, unknown[][]>;
}

/** The lookup values of some items: their ids, their non-null unique fields, their complete unique indexes. */
export function keyLookups(model: EntityModel, items: readonly { id?: string; values: ReadonlyMap<FieldModel, unknown> }[]): KeyLookups {
  const lookups: KeyLookups = { ids: new Set(), fields: new Map(), indexes: new Map() };
  for (const { id, values } of items) {
    if (id) lookups.ids.add(id);
    for (const [f, v] of values) if (f.def.unique && v !== null && v !== undefined) lookups.fields.set(f, (lookups.fields.get(f) ?? new Set()).add(v));
    for (const ix of model.uniqueIndexes) {
      const tuple = ix.fields.map((n) => values.get(model.field.get(n) as FieldModel));
      if (tuple.every((v) => v !== undefined && v !== null)) lookups.indexes.set(ix.name, [...(lookups.indexes.get(ix.name) ?? []), tuple]);
    }
  }
  return lookups;
}

/**
 * Live records of an entity named by any of the lookup values: one query per key kind (ids, each
 * unique field, each unique index), whatever the batch size.
 */
export async function fetchByKeys(
  trx: Knex.Transaction,
  repo: Repository,
  lookups: KeyLookups,
): Promise<Record<string, unknown>[]> {
  const { model } = repo;
  const dialect = repo.env.database.dialect;
  const rows = new Map<string, Record<string, unknown>>();
  const run = async (apply: (qb: Knex.QueryBuilder) => void) => {
    const qb = trx(model.table).select('*').where('deleted', live(dialect) as never);
    apply(qb);
    for (const row of await qb) rows.set(row.id as string, row);
  };
  for (const ids of chunks([...lookups.ids], 1000)) await run((qb) => void qb.whereIn('id', ids));
  for (const [field, values] of lookups.fields) {
    for (const part of chunks([...values], 1000)) await run((qb) => void qb.whereIn(field.column as string, part.map((v) => dialect.toDb(field.type, v)) as never[]));
  }
  for (const [name, tuples] of lookups.indexes) {
    const ix = model.uniqueIndexes.find((u) => u.name === name);
    if (!ix) continue;
    const fields = ix.fields.map((n) => model.field.get(n) as FieldModel);
    if (fields.length === 1) {
      const [f] = fields;
      for (const part of chunks(tuples, 1000)) await run((qb) => void qb.whereIn(f.column as string, part.map((t) => dialect.toDb(f.type, t[0])) as never[]));
      continue;
    }
    // OR of ANDs: SQLite limits expression depth to 1000, so keep the chains short.
    for (const part of chunks(tuples, 100)) {
      await run((qb) =>
        void qb.where((w) => {
          for (const tuple of part) w.orWhere((and) => fields.forEach((f, i) => void and.where(f.column as string, dialect.toDb(f.type, tuple[i]) as never)));
        }),
      );
    }
  }
  return decodeStored(model, dialect, [...rows.values()]);
}

/** Current ids of a multiple link for many owners, one query per field. */
export async function fetchMultipleLinks(
  trx: Knex.Transaction,
  schema: SchemaModel,
  dialect: Dialect,
  field: FieldModel,
  ownerIds: string[],
): Promise<Map<string, string[]>> {
  const out = new Map(ownerIds.map((id) => [id, [] as string[]]));
  const target = schema.entity(field.target as string) as EntityModel;
  for (const part of chunks(ownerIds, 1000)) {
    const rows: { o: string; id: string }[] =
      field.linkKind === 'hasMany'
        ? await trx(target.table).select({ o: field.foreignColumn as string, id: 'id' }).whereIn(field.foreignColumn as string, part).andWhere('deleted', live(dialect) as never)
        : await trx((field.join as NonNullable<FieldModel['join']>).table)
            .select({ o: (field.join as NonNullable<FieldModel['join']>).ownColumn, id: (field.join as NonNullable<FieldModel['join']>).targetColumn })
            .whereIn((field.join as NonNullable<FieldModel['join']>).ownColumn, part);
    for (const r of rows) out.get(r.o)?.push(r.id);
  }
  return out;
}

/** The row a state is stored as: every stored column. */
export function toStoredRow(repo: Repository, state: RecordState): Record<string, unknown> {
  const dialect = repo.env.database.dialect;
  const row: Record<string, unknown> = {};
  for (const f of storedFields(repo.model)) row[f.column as string] = dialect.toDb(f.type, state.record[f.key] ?? null);
  return row;
}

/** SQLite builds a multi-row insert as a compound select, which may have at most 500 terms. */
const SQLITE_MAX_ROWS = 400;
/** Rows per statement on PostgreSQL, where they travel as one JSON parameter. */
const PG_MAX_ROWS = 5000;

/**
 * PostgreSQL rows as one JSON document for `json_populate_recordset`: one bound value however
 * many rows, so the statement costs one parse whatever the batch (JSON columns go as JSON).
 */
function pgRecordset(model: EntityModel, rows: Record<string, unknown>[]): string {
  const jsonColumns = storedFields(model)
    .filter((f) => f.type === 'multiEnum' || f.type === 'jsonObject')
    .map((f) => f.column as string);
  if (jsonColumns.length === 0) return JSON.stringify(rows);
  return JSON.stringify(
    rows.map((row) => {
      const out = { ...row };
      for (const c of jsonColumns) if (typeof out[c] === 'string') out[c] = JSON.parse(out[c] as string);
      return out;
    }),
  );
}

/**
 * PostgreSQL rows from one JSON recordset. A plain insert costs PostgreSQL about a third less
 * than ON CONFLICT DO NOTHING, which inserts every row speculatively. A conflict means another
 * request stored one of the keys since they were looked up, which is rare: so the plain insert is
 * tried first, in a savepoint, and only after a unique violation are the rows inserted again
 * skipping those whose key is taken. Answers the ids stored.
 */
async function insertRecordset(trx: Knex.Transaction, dialect: Dialect, model: EntityModel, columns: string[], rows: Record<string, unknown>[]): Promise<string[]> {
  const list = columns.map(q).join(', ');
  const sql = `insert into ${q(model.table)} (${list}) select ${list} from json_populate_recordset(null::${q(model.table)}, ?::json)`;
  const json = pgRecordset(model, rows);
  try {
    await trx.transaction((sp) => sp.raw(sql, [json]));
    return rows.map((r) => r.id as string);
  } catch (error) {
    if (dialect.translateError(error, {})?.code !== 'CORE_UNIQUE_VIOLATION') throw error;
    const result = await trx.raw(`${sql} on conflict do nothing returning id`, [json]);
    return (result.rows as { id: string }[]).map((r) => r.id);
  }
}

/** Inserts new records in as few statements as the limits allow; answers the ids stored. */
export async function insertRows(trx: Knex.Transaction, dialect: Dialect, model: EntityModel, rows: Record<string, unknown>[]): Promise<Set<string>> {
  const stored = new Set<string>();
  if (rows.length === 0) return stored;
  const columns = Object.keys(rows[0]);
  if (dialect.name === 'postgres') {
    for (const part of chunks(rows, PG_MAX_ROWS)) for (const id of await insertRecordset(trx, dialect, model, columns, part)) stored.add(id);
    return stored;
  }
  for (const part of chunks(rows, Math.max(1, Math.min(SQLITE_MAX_ROWS, Math.floor(MAX_BINDINGS / columns.length))))) {
    const returned = await trx(model.table).insert(part).onConflict().ignore().returning('id');
    for (const r of returned as { id: string }[]) stored.add(r.id);
  }
  return stored;
}

/**
 * Updates many records in one statement per chunk on PostgreSQL (`UPDATE … FROM json_populate_recordset`),
 * and with one prepared statement per record inside the transaction on SQLite.
 */
export async function updateRows(trx: Knex.Transaction, repo: Repository, rows: Record<string, unknown>[], columns: string[]): Promise<void> {
  const { model } = repo;
  const dialect = repo.env.database.dialect;
  if (rows.length === 0) return;
  if (dialect.name !== 'postgres') {
    for (const row of rows) {
      const { id, ...set } = row;
      await trx(model.table).update(Object.fromEntries(columns.map((c) => [c, set[c]]))).where({ id, deleted: live(dialect) });
    }
    return;
  }
  const set = columns.map((c) => `${q(c)} = v.${q(c)}`).join(', ');
  const sql = `update ${q(model.table)} as t set ${set} from json_populate_recordset(null::${q(model.table)}, ?::json) as v where t.id = v.id and t.deleted = false`;
  for (const part of chunks(rows, PG_MAX_ROWS)) await trx.raw(sql, [pgRecordset(model, part)]);
}

/** Replaces the join rows of many owners at once: one delete and one insert per chunk. */
export async function replaceJoinRows(trx: Knex.Transaction, field: FieldModel, sets: Map<string, string[]>): Promise<void> {
  const join = field.join as NonNullable<FieldModel['join']>;
  const owners = [...sets.keys()];
  for (const part of chunks(owners, 1000)) await trx(join.table).delete().whereIn(join.ownColumn, part);
  const pairs = [...sets].flatMap(([own, ids]) => ids.map((id) => ({ [join.ownColumn]: own, [join.targetColumn]: id })));
  for (const part of chunks(pairs, 10_000)) await trx(join.table).insert(part);
}
