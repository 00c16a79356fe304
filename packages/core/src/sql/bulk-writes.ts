import type { Knex } from 'knex';
import type { EntityModel, FieldModel } from '../definition/normalize';
import type { Dialect } from './dialects/dialect';
import { live } from './read-query';
import type { SqlContext } from './sql-context';
import { chunks } from '../util/chunks';
import { storedFields } from './upsert-io';

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Rows per statement. */
const MAX_ROWS = 5000;

/**
 * Rows of one table as one JSON document bound to a single parameter, so that a statement costs
 * one parse and one plan whatever the number of rows (and no binding limit applies). PostgreSQL
 * reads it with `json_populate_recordset` (rows as objects, typed by the table), SQLite with
 * `json_each` (rows as arrays, values by position).
 */
interface Recordset {
  /** The bound JSON. */
  json: string;
  /** The FROM item that reads it, aliased `v`, with one `?`. */
  from: string;
  /** The SQL of one column's value in the current row. */
  value(column: string): string;
}

/** The table rows go into: its name, the columns the rows set (in that order), those of them that hold JSON. */
interface RowShape {
  table: string;
  columns: readonly string[];
  jsonColumns?: readonly string[];
}

function recordset(dialect: Dialect, rows: Record<string, unknown>[], { table, columns, jsonColumns = [] }: RowShape): Recordset {
  if (dialect.name === 'postgres') {
    // JSON columns hold JSON text; in the document they go as JSON.
    const parsed = jsonColumns.length === 0 ? rows : rows.map((row) => {
      const out = { ...row };
      for (const c of jsonColumns) if (typeof out[c] === 'string') out[c] = JSON.parse(out[c] as string);
      return out;
    });
    return { json: JSON.stringify(parsed), from: `json_populate_recordset(null::${q(table)}, ?::json) as v`, value: (c) => `v.${q(c)}` };
  }
  const position = new Map(columns.map((c, i) => [c, i]));
  return {
    json: JSON.stringify(rows.map((row) => columns.map((c) => row[c]))),
    from: 'json_each(?) as v',
    value: (c) => `v.value ->> ${position.get(c) as number}`,
  };
}

const jsonColumnsOf = (model: EntityModel) => storedFields(model).filter((f) => f.type === 'multiEnum' || f.type === 'jsonObject').map((f) => f.column as string);

/**
 * Inserts new records (rows keyed by column, all with the same columns); answers the ids stored.
 * Rows whose key another request stored meanwhile are skipped: the caller replays them as updates.
 *
 * On PostgreSQL a plain insert costs about a third less than ON CONFLICT DO NOTHING, which
 * inserts every row speculatively, and a conflict is rare (another request stored one of the
 * keys since they were looked up): so the plain insert is tried first, in a savepoint, and only
 * after a unique violation are the rows inserted again skipping those whose key is taken.
 * SQLite has one writer at a time, so it skips taken keys in the same statement at no cost.
 */
export async function insertRows(sql: SqlContext<Knex.Transaction>, model: EntityModel, rows: Record<string, unknown>[]): Promise<Set<string>> {
  const { db: trx, dialect } = sql;
  const stored = new Set<string>();
  if (rows.length === 0) return stored;
  const columns = Object.keys(rows[0]);
  for (const part of chunks(rows, MAX_ROWS)) {
    const set = recordset(dialect, part, { table: model.table, columns, jsonColumns: jsonColumnsOf(model) });
    const insert = `insert into ${q(model.table)} (${columns.map(q).join(', ')}) select ${columns.map(set.value).join(', ')} from ${set.from}`;
    let ids: string[];
    if (dialect.name === 'postgres') {
      try {
        await trx.transaction((sp) => sp.raw(insert, [set.json]));
        ids = part.map((r) => r.id as string);
      } catch (error) {
        if (dialect.translateError(error, {})?.code !== 'CORE_UNIQUE_VIOLATION') throw error;
        ids = ((await trx.raw(`${insert} on conflict do nothing returning id`, [set.json])).rows as { id: string }[]).map((r) => r.id);
      }
    } else {
      // `where true` tells SQLite's parser that ON CONFLICT belongs to the insert, not to a join.
      ids = ((await trx.raw(`${insert} where true on conflict do nothing returning "id"`, [set.json])) as { id: string }[]).map((r) => r.id);
    }
    for (const id of ids) stored.add(id);
  }
  return stored;
}

/** Sets `columns` of many live records, each row to its own values (rows keyed by column, with `id`). */
export async function updateRows(
  sql: SqlContext<Knex.Transaction>,
  model: EntityModel,
  { rows, columns }: { rows: Record<string, unknown>[]; columns: string[] },
): Promise<void> {
  const { db: trx, dialect } = sql;
  const t = q(model.table);
  for (const part of chunks(rows, MAX_ROWS)) {
    const set = recordset(dialect, part, { table: model.table, columns: ['id', ...columns], jsonColumns: jsonColumnsOf(model) });
    const assignments = columns.map((c) => `${q(c)} = ${set.value(c)}`).join(', ');
    await trx.raw(`update ${t} as t set ${assignments} from ${set.from} where t.id = ${set.value('id')} and t.deleted = ?`, [set.json, live(dialect)]);
  }
}

/** Replaces the join rows of many owners at once: one delete and one insert per chunk. */
export async function replaceJoinRows(sql: SqlContext<Knex.Transaction>, field: FieldModel, sets: Map<string, string[]>): Promise<void> {
  const { db: trx, dialect } = sql;
  const { table, ownColumn, targetColumn } = field.join as NonNullable<FieldModel['join']>;
  for (const part of chunks([...sets.keys()], 1000)) await trx(table).delete().whereIn(ownColumn, part);
  const pairs = [...sets].flatMap(([own, ids]) => ids.map((id) => ({ [ownColumn]: own, [targetColumn]: id })));
  for (const part of chunks(pairs, MAX_ROWS)) {
    const set = recordset(dialect, part, { table, columns: [ownColumn, targetColumn] });
    await trx.raw(`insert into ${q(table)} (${q(ownColumn)}, ${q(targetColumn)}) select ${set.value(ownColumn)}, ${set.value(targetColumn)} from ${set.from}`, [set.json]);
  }
}
