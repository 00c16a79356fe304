import type { Knex } from 'knex';
import type { EntityModel, ManyToManyField } from '../definition/model';
import { quoteName } from './dialects/shared';
import { VERSION_COLUMN } from './schema-sync';
import type { SqlContext } from './sql-context';
import { chunks } from '../util/chunks';
import { storedFields } from './upsert-io';
import { runText } from './prepared';
import { insertSelect } from './insert-select';
import { liveIds, otherSideOf, relinkOtherSide } from './join-other-side';
import type { MovedLinks } from './link-store';
import type { RowChange } from './record-columns';
import type { InsertLogging } from './dialects/dialect';

const q = quoteName;

const jsonColumnsOf = (model: EntityModel) => storedFields(model).filter((f) => f.type === 'multiEnum' || f.type === 'jsonObject').map((f) => f.column);

/**
 * Starts inserting new records (rows keyed by column, all with the same columns); `stored` answers
 * the ids stored, and whether `logging` logged their changes: rows that fit one statement, all
 * stored by its plain insert (more rows are inserted without it). Rows whose key another request
 * stored meanwhile are skipped: the caller replays them as updates (with `failOnTaken`, they may
 * fail the transaction instead: see `insertNew`). Answers once the database has the first
 * statement: the caller may work while it inserts, and awaits `stored` before its next statement.
 */
export async function startInsertRows(
  sql: SqlContext<Knex.Transaction>,
  model: EntityModel,
  { rows, logging, failOnTaken }: { rows: Record<string, unknown>[]; logging?: InsertLogging; failOnTaken?: boolean },
): Promise<{ stored: Promise<{ ids: Set<string>; logged: boolean }> }> {
  const { dialect } = sql;
  if (rows.length === 0) return { stored: Promise.resolve({ ids: new Set(), logged: false }) };
  const columns = Object.keys(rows[0]);
  const shape = { table: model.table, columns, jsonColumns: jsonColumnsOf(model) };
  const shareable = columns.filter((c) => c !== 'id');
  const [first, ...rest] = chunks(rows, dialect.recordsetRows(columns.length));
  const insert = (part: Record<string, unknown>[]) => {
    const { key, text, bindings } = insertSelect(dialect, part, { shape, shareable });
    return dialect.insertNew(sql, { key, sql: text, bindings, ids: part.map((r) => r.id as string), logging: rest.length ? undefined : logging, failOnTaken });
  };
  const started = await insert(first);
  const stored = (async () => {
    const { ids, logged } = await started.stored;
    const all = new Set(ids);
    for (const part of rest) for (const id of (await (await insert(part)).stored).ids) all.add(id);
    return { ids: all, logged };
  })();
  // The caller awaits it after its own work; a failure before that is not unhandled.
  stored.catch(() => undefined);
  return { stored };
}

/**
 * Sets `columns` of many live records, each row to its own values (rows keyed by column, with `id`
 * and the `record_version` each was read at), and counts each record's version up. A row whose
 * record another request changed or deleted since it was read is left as it is: the answer is
 * the number of rows written, fewer than given when that happened. Once written, a row stays
 * locked until the transaction ends (where the database locks rows).
 */
export async function updateRows(
  sql: SqlContext<Knex.Transaction>,
  model: EntityModel,
  { rows, columns }: { rows: Record<string, unknown>[]; columns: string[] },
): Promise<number> {
  const { dialect } = sql;
  const t = q(model.table);
  const version = q(VERSION_COLUMN);
  let written = 0;
  for (const part of chunks(rows, dialect.recordsetRows(columns.length + 2))) {
    const set = dialect.recordset(part, { table: model.table, columns: ['id', ...columns, VERSION_COLUMN], jsonColumns: jsonColumnsOf(model) });
    const assignments = () => [...columns.map((c) => `${q(c)} = ${set.value(c)}`), `${version} = t.${version} + 1`].join(', ');
    const statement = {
      method: 'count' as const,
      key: `update:${model.table}:${columns.join(',')}:${set.key}`,
      text: () => `update ${t} as t set ${assignments()} from ${set.from} where t.id = ${set.value('id')} and t.deleted = ? and t.${version} = ${set.value(VERSION_COLUMN)}`,
    };
    written += await runText<number>(sql, statement, [...set.bindings, dialect.live]);
  }
  return written;
}

/**
 * Replaces the join rows of many owners at once: one delete and one insert per chunk. Answers the
 * records of the other side whose list changed (their pairs are read first, when there is one),
 * which record `change` as their modification.
 */
export async function replaceJoinRows(sql: SqlContext<Knex.Transaction>, field: ManyToManyField, { sets, change }: { sets: Map<string, string[]>; change: RowChange }): Promise<MovedLinks | undefined> {
  const { db: trx, dialect } = sql;
  const { table, ownColumn, targetColumn } = field.join;
  const before = otherSideOf(sql.schema, field) ? new Set<string>() : undefined;
  for (const part of chunks([...sets.keys()], 1000)) {
    // Pairs with a record in the bin stay as they are (see `liveIds`).
    if (before) for (const r of (await trx(table).select({ o: ownColumn, id: targetColumn }).whereIn(ownColumn, part).whereIn(targetColumn, liveIds(sql, field.target))) as { o: string; id: string }[]) before.add(JSON.stringify([r.o, r.id]));
    await trx(table).delete().whereIn(ownColumn, part).whereIn(targetColumn, liveIds(sql, field.target));
  }
  const pairs = [...sets].flatMap(([own, ids]) => ids.map((id) => ({ [ownColumn]: own, [targetColumn]: id })));
  for (const part of chunks(pairs, dialect.recordsetRows(2))) {
    const set = dialect.recordset(part, { table, columns: [ownColumn, targetColumn] });
    const statement = {
      method: 'count' as const,
      // Both sides of a many-to-many link write one table, each in its own column order.
      key: `join:${table}:${ownColumn}:${set.key}`,
      text: () => `insert into ${q(table)} (${q(ownColumn)}, ${q(targetColumn)}) select ${set.value(ownColumn)}, ${set.value(targetColumn)} from ${set.from}`,
    };
    await runText(sql, statement, set.bindings);
  }
  if (!before) return undefined;
  const after = new Set(pairs.map((p) => JSON.stringify([p[ownColumn], p[targetColumn]])));
  const pairsIn = (keys: Set<string>, without: Set<string>) => [...keys].filter((k) => !without.has(k)).map((k) => JSON.parse(k) as [string, string]);
  return relinkOtherSide(sql, field, { added: pairsIn(after, before), removed: pairsIn(before, after), skip: new Set(sets.keys()), change });
}
