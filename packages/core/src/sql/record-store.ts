import type { Knex } from 'knex';
import type { EntityModel, FieldModel } from '../definition/model';
import { detachEverywhere, lockLinking, type DetachedRecord, type PurgedValues } from './link-store';
import { ownedBy, withNextVersion, type Owner, type RowChange, type RowFilter } from './record-columns';
import { prepareStatement, runPrepared, type Param } from './prepared';
import { VERSION_COLUMN } from './schema-sync';
import type { SqlContext } from './sql-context';

/**
 * The statements that write the row of one record. Callers decide what may be written; these
 * only say how.
 */

/** Whether every value of a row can be bound as it is (no knex expression, nothing undefined). */
const isPlain = (row: Record<string, unknown>): boolean =>
  Object.values(row).every((v) => v !== undefined && !(typeof v === 'object' && v !== null && typeof (v as { toSQL?: unknown }).toSQL === 'function'));

/** Markers for the values of `columns`, under `prefix` + column. */
const markers = (param: Param, columns: readonly string[], prefix = ''): Record<string, string> => Object.fromEntries(columns.map((c) => [c, param(prefix + c)]));

/** The columns of an insert of `row`, in name order (as knex orders them); undefined when a value cannot be bound as it is. */
export function insertColumns(row: Record<string, unknown>): readonly string[] | undefined {
  return isPlain(row) ? Object.keys(row).sort() : undefined;
}

/** The insert of a row of `columns`, each value a marker named by its column (see `prepareStatement`). */
export function insertWithMarkers(sql: SqlContext, model: Pick<EntityModel, 'table'>, { columns, param }: { columns: readonly string[]; param: Param }): Knex.QueryBuilder {
  return sql.db(model.table).insert(markers(param, columns));
}

/** A single link that an insert checks itself: the row is inserted only when `table` holds a live record whose id is the row's value of `column`. */
export interface LinkGuard {
  column: string;
  table: string;
}

/**
 * The insert of `insertWithMarkers`, made only when every guarded link names a live record when
 * the statement runs (`insert … select <values> where exists (…) and …`): it inserts no row
 * otherwise. A link whose value is null is not guarded. Where writers lock rows, the linked
 * records are held until the statement's transaction ends (`Hold` in link-store.ts: `share`).
 */
export function guardedInsertWithMarkers(
  sql: SqlContext,
  model: Pick<EntityModel, 'table'>,
  { columns, param, guards }: { columns: readonly string[]; param: Param; guards: readonly LinkGuard[] },
): Knex.Raw {
  const q = (name: string) => sql.db.raw('??', [name]).toQuery();
  const live = sql.dialect.live;
  const held = sql.dialect.locksRows ? ' for key share' : '';
  const exists = guards.map((g) => `exists (select 1 from ${q(g.table)} where ${q('id')} = ? and ${q('deleted')} = ?${held})`);
  return sql.db.raw(`insert into ${q(model.table)} (${columns.map(q).join(', ')}) select ${columns.map(() => '?').join(', ')} where ${exists.join(' and ')}`, [
    ...columns.map((c) => param(c)),
    ...guards.flatMap((g) => [param(g.column), live]),
  ] as Knex.RawBinding[]);
}

/** Inserts one row into a table: one statement compiled per table and set of columns. */
export async function insertRow(sql: SqlContext, model: Pick<EntityModel, 'table'>, row: Record<string, unknown>): Promise<void> {
  const columns = insertColumns(row);
  if (!columns) {
    await sql.db(model.table).insert(row);
    return;
  }
  const statement = sql.statements.get(`insert:${model.table}:${columns.join(',')}`, () =>
    prepareStatement('count', (param) => insertWithMarkers(sql, model, { columns, param })),
  );
  await runPrepared(sql, statement, row);
}

/** What an update of one live record sets, and the column values the row must still hold. */
export interface RowUpdate {
  id: string;
  row: Record<string, unknown>;
  expected?: Record<string, unknown>;
}

/** The update of one live record: its columns and its next version set, where it is still as `expected`. */
function updateQuery(sql: SqlContext, model: EntityModel, { id, row, expected = {} }: RowUpdate): Knex.QueryBuilder {
  return sql.db(model.table).update(withNextVersion(sql, row)).where({ ...expected, id, deleted: sql.dialect.live });
}

/** The shape of an update: the columns it sets and those it expects, in name order. */
export interface UpdateShape {
  columns: readonly string[];
  conditions: readonly string[];
  /** The shape as a key of compiled statements (with the table). */
  key: string;
}

/** The shape of an update, or undefined when a value cannot be bound as it is (it is not compiled then). */
export function updateShape(model: EntityModel, { row, expected = {} }: RowUpdate): UpdateShape | undefined {
  if (!isPlain(row) || !isPlain(expected)) return undefined;
  const columns = Object.keys(row).sort();
  const conditions = Object.keys(expected).sort();
  return { columns, conditions, key: `${model.table}:${columns.join(',')}|${conditions.join(',')}` };
}

/** The update of a shape with markers (`set:<column>`, `where:<column>`, `id`) for its values. */
export function updateWithMarkers(sql: SqlContext, model: EntityModel, { shape, param }: { shape: UpdateShape; param: Param }): Knex.QueryBuilder {
  return updateQuery(sql, model, { id: param('id'), row: markers(param, shape.columns, 'set:'), expected: markers(param, shape.conditions, 'where:') });
}

/** The values of an update for its statement (see `updateWithMarkers`). */
export function updateValues({ id, row, expected = {} }: RowUpdate, shape: UpdateShape): Record<string, unknown> {
  const values: Record<string, unknown> = { id };
  for (const c of shape.columns) values[`set:${c}`] = row[c];
  for (const c of shape.conditions) values[`where:${c}`] = expected[c];
  return values;
}

/**
 * Sets columns of a live record; `expected` are column values the row must still hold. Answers
 * whether a row was written. One statement compiled per table and set of columns.
 */
export async function updateRow(sql: SqlContext, model: EntityModel, update: RowUpdate): Promise<boolean> {
  const shape = updateShape(model, update);
  if (!shape) return (await updateQuery(sql, model, update)) > 0;
  const statement = sql.statements.get(`update:${shape.key}`, () => prepareStatement('count', (param) => updateWithMarkers(sql, model, { shape, param })));
  return (await runPrepared<number>(sql, statement, updateValues(update, shape))) > 0;
}

/** Whether a live record has this id (and meets `within`, when given). */
export async function isLive(sql: SqlContext, model: EntityModel, { id, within }: { id: string; within?: RowFilter }): Promise<boolean> {
  const qb = sql.db(model.table).first('id').where({ [`${model.table}.id`]: id, [`${model.table}.deleted`]: sql.dialect.live });
  within?.(qb);
  return !!(await qb);
}

/** Of `ids`, those of live rows: one query. */
export async function liveIds(sql: SqlContext, model: EntityModel, ids: readonly string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = (await sql.db(model.table).select('id').whereIn('id', ids).where('deleted', sql.dialect.live as never)) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

/** Of `ids`, those of rows (live or deleted) that meet `within`: one query. */
export async function rowsWithin(sql: SqlContext, model: EntityModel, { ids, within }: { ids: readonly string[]; within: RowFilter }): Promise<Set<string>> {
  const qb = sql.db(model.table).select(`${model.table}.id`).whereIn(`${model.table}.id`, ids);
  within(qb);
  return new Set(((await qb) as { id: string }[]).map((r) => r.id));
}

/**
 * Marks a live record deleted (it keeps its row, and frees its unique values), only while it is at
 * `version` when one is given (`If-Match`); answers whether it did.
 */
export async function softDeleteRow(sql: SqlContext, model: EntityModel, { id, row, version }: { id: string; row: Record<string, unknown>; version?: number }): Promise<boolean> {
  const where = { id, deleted: sql.dialect.live, ...(version !== undefined && { [VERSION_COLUMN]: version }) };
  return (await sql.db(model.table).update(withNextVersion(sql, { ...row, deleted: sql.dialect.toDb('bool', true) })).where(where)) > 0;
}

/**
 * Removes a record's row, live or deleted, and every link to it (the attribute values `values`
 * names too); answers the records whose links or values it changed (undefined when it removed
 * nothing). The row is locked first, with those of the records that link it or hold such values
 * (where the database locks rows): of two requests that remove it at once, the second waits, then
 * finds it gone and removes (and logs) nothing. With `version`, only the row at that version
 * (`If-Match`).
 */
export async function purgeRow(
  sql: SqlContext<Knex.Transaction>,
  model: EntityModel,
  { id, version, values, change }: { id: string; version?: number; values?: PurgedValues; change: RowChange },
): Promise<DetachedRecord[] | undefined> {
  const where = { id, ...(version !== undefined && { [VERSION_COLUMN]: version }) };
  // A write that linked to it holds it (`Hold` in link-store.ts): it commits before the links to
  // it are read for good, and a later one finds it gone (see `lockLinking`).
  const linking = await lockLinking(sql, model, { id, values });
  const found = sql.db(model.table).select('id').where(where);
  if ((await (sql.dialect.locksRows ? found.forUpdate() : found)).length === 0) return undefined;
  const detached = await detachEverywhere(sql, model, { id, linking, values, change });
  return (await sql.db(model.table).delete().where(where)) > 0 ? detached : undefined;
}

/** Brings a deleted record back (`owner`: only one of theirs; `within`: only one the row rules keep); answers whether it did. */
export async function restoreRow(
  sql: SqlContext,
  model: EntityModel,
  { id, row, owner, within }: { id: string; row: Record<string, unknown>; owner?: Owner; within?: RowFilter },
): Promise<boolean> {
  const qb = sql.db(model.table).update(withNextVersion(sql, { ...row, deleted: sql.dialect.live })).where({ [`${model.table}.id`]: id, [`${model.table}.deleted`]: sql.dialect.toDb('bool', true) });
  if (owner) ownedBy(model, owner)(qb);
  within?.(qb);
  return (await qb) > 0;
}

/**
 * The stored columns of one record, deleted or not (`deleted` tells which): what a write that
 * may reach deleted records (a permanent delete) judges them by.
 */
export async function findAnyRow(
  sql: SqlContext,
  model: EntityModel,
  { id, fields, within }: { id: string; fields: readonly FieldModel[]; within?: RowFilter },
): Promise<Record<string, unknown> | undefined> {
  const columns: Record<string, string> = { deleted: `${model.table}.deleted` };
  for (const f of fields) if (f.column !== undefined) columns[f.key] = `${model.table}.${f.column}`;
  const qb = sql.db(model.table).first(columns).where({ [`${model.table}.id`]: id });
  within?.(qb);
  const row = await qb;
  if (!row) return undefined;
  for (const f of fields) if (f.column !== undefined) row[f.key] = sql.dialect.fromDb(f.type, row[f.key]);
  row.deleted = sql.dialect.fromDb('bool', row.deleted);
  return row;
}

/** The number of live records a filter keeps. */
export async function countRows(sql: SqlContext, model: EntityModel, filter: (qb: Knex.QueryBuilder) => void): Promise<number> {
  const qb = sql.db(model.table).where(`${model.table}.deleted`, sql.dialect.live as never);
  filter(qb);
  const [{ total }] = await qb.count({ total: '*' });
  return Number(total);
}

/**
 * Adds 1 to an int column of a live record in one statement, only while it is below another int
 * column (a NULL limit: none) and the record meets `filter`: callers on any number of processes
 * never pass the limit together. The count is a write of the record: its version moves with it.
 * Answers whether it counted.
 */
export async function incrementBelow(
  sql: SqlContext,
  model: EntityModel,
  { id, counter, limit, filter }: { id: string; counter: string; limit: string; filter: (qb: Knex.QueryBuilder) => void },
): Promise<boolean> {
  const { db, dialect } = sql;
  const qb = db(model.table).where({ [`${model.table}.id`]: id, [`${model.table}.deleted`]: dialect.live });
  qb.andWhere((w) => void w.whereNull(`${model.table}.${limit}`).orWhere(`${model.table}.${counter}`, '<', db.ref(`${model.table}.${limit}`)));
  filter(qb);
  return (await qb.update(withNextVersion(sql, { [counter]: db.raw('?? + 1', [counter]) }))) === 1;
}

export { createdColumns, keyColumns, modifiedColumns, ownedBy, toRow, withNextVersion, type Owner, type RowChange, type RowFilter } from './record-columns';
