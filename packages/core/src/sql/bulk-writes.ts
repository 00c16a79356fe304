import type { Knex } from 'knex';
import type { EntityModel, ManyToManyField } from '../definition/model';
import { quoteName } from './dialects/shared';
import { VERSION_COLUMN } from './schema-sync';
import type { SqlContext } from './sql-context';
import { chunks } from '../util/chunks';
import { storedFields } from './upsert-io';
import { runText } from './prepared';

const q = quoteName;

const jsonColumnsOf = (model: EntityModel) => storedFields(model).filter((f) => f.type === 'multiEnum' || f.type === 'jsonObject').map((f) => f.column);

/**
 * Inserts new records (rows keyed by column, all with the same columns); answers the ids stored.
 * Rows whose key another request stored meanwhile are skipped: the caller replays them as updates.
 */
export async function insertRows(sql: SqlContext<Knex.Transaction>, model: EntityModel, rows: Record<string, unknown>[]): Promise<Set<string>> {
  const { dialect } = sql;
  const stored = new Set<string>();
  if (rows.length === 0) return stored;
  const columns = Object.keys(rows[0]);
  for (const part of chunks(rows, dialect.recordsetRows(columns.length))) {
    const set = dialect.recordset(part, { table: model.table, columns, jsonColumns: jsonColumnsOf(model) });
    const insert = () => `insert into ${q(model.table)} (${columns.map(q).join(', ')}) select ${columns.map(set.value).join(', ')} from ${set.from}`;
    const key = `${model.table}:${columns.join(',')}:${set.key}`;
    for (const id of await dialect.insertNew(sql, { key, sql: insert, bindings: set.bindings, ids: part.map((r) => r.id as string) })) stored.add(id);
  }
  return stored;
}

/** Sets `columns` of many live records, each row to its own values (rows keyed by column, with `id`). */
export async function updateRows(
  sql: SqlContext<Knex.Transaction>,
  model: EntityModel,
  { rows, columns }: { rows: Record<string, unknown>[]; columns: string[] },
): Promise<void> {
  const { dialect } = sql;
  const t = q(model.table);
  for (const part of chunks(rows, dialect.recordsetRows(columns.length + 1))) {
    const set = dialect.recordset(part, { table: model.table, columns: ['id', ...columns], jsonColumns: jsonColumnsOf(model) });
    const assignments = () => [...columns.map((c) => `${q(c)} = ${set.value(c)}`), `${q(VERSION_COLUMN)} = t.${q(VERSION_COLUMN)} + 1`].join(', ');
    const statement = {
      method: 'count' as const,
      key: `update:${model.table}:${columns.join(',')}:${set.key}`,
      text: () => `update ${t} as t set ${assignments()} from ${set.from} where t.id = ${set.value('id')} and t.deleted = ?`,
    };
    await runText(sql, statement, [...set.bindings, dialect.live]);
  }
}

/** Replaces the join rows of many owners at once: one delete and one insert per chunk. */
export async function replaceJoinRows(sql: SqlContext<Knex.Transaction>, field: ManyToManyField, sets: Map<string, string[]>): Promise<void> {
  const { db: trx, dialect } = sql;
  const { table, ownColumn, targetColumn } = field.join;
  for (const part of chunks([...sets.keys()], 1000)) await trx(table).delete().whereIn(ownColumn, part);
  const pairs = [...sets].flatMap(([own, ids]) => ids.map((id) => ({ [ownColumn]: own, [targetColumn]: id })));
  for (const part of chunks(pairs, dialect.recordsetRows(2))) {
    const set = dialect.recordset(part, { table, columns: [ownColumn, targetColumn] });
    const statement = {
      method: 'count' as const,
      key: `join:${table}:${set.key}`,
      text: () => `insert into ${q(table)} (${q(ownColumn)}, ${q(targetColumn)}) select ${set.value(ownColumn)}, ${set.value(targetColumn)} from ${set.from}`,
    };
    await runText(sql, statement, set.bindings);
  }
}
