import type { Knex } from 'knex';
import type { EntityModel, FieldModel, MultipleLinkField } from '../definition/model';
import type { Dialect } from './dialects/dialect';
import { VERSION_COLUMN } from './schema-sync';
import type { SqlContext } from './sql-context';

/** How a record's row is written: the columns a change sets, ownership conditions, versions. */

/** Whose records are someone's own: created by them, or assigned to them when the entity has `assignedUser`. */
export interface Owner {
  userId: string;
}

/** Narrows a query of one entity's table to some of its rows (row rules, `own`): where conditions only. */
export type RowFilter = (qb: Knex.QueryBuilder) => void;

/** Restricts a query of `model` to the records of `owner`. */
export function ownedBy(model: EntityModel, owner: Owner): (qb: Knex.QueryBuilder) => void {
  const t = model.table;
  const assigned = model.field.get('assignedUser');
  return (qb) =>
    void qb.where((w) => {
      w.where(`${t}.created_by_id`, owner.userId);
      if (assigned?.column) w.orWhere(`${t}.${assigned.column}`, owner.userId);
    });
}

/** A row's columns to set, and its version one more (every write of a record makes a new version). */
export function withNextVersion(sql: SqlContext, row: Record<string, unknown>): Record<string, unknown> {
  return { ...row, [VERSION_COLUMN]: sql.db.raw('?? + 1', [VERSION_COLUMN]) };
}

/** Who changes a row, and when. */
export interface RowChange {
  at: string;
  userId: string | null;
  /** The admin acting in a delegated session. */
  actorId: string | null;
}

/** The columns every change sets. */
export const modifiedColumns = ({ at, userId, actorId }: RowChange): Record<string, unknown> => ({ modified_at: at, modified_by_id: userId, modified_by_actor_id: actorId });

/** The columns a new row sets besides its fields. */
export const createdColumns = (change: RowChange): Record<string, unknown> => ({
  created_at: change.at,
  created_by_id: change.userId,
  created_by_actor_id: change.actorId,
  ...modifiedColumns(change),
});

/** Splits validated values into stored columns and multiple links (ids without repeats). */
export function toRow(dialect: Dialect, values: ReadonlyMap<FieldModel, unknown>): { row: Record<string, unknown>; links: [MultipleLinkField, string[]][] } {
  const row: Record<string, unknown> = {};
  const links: [MultipleLinkField, string[]][] = [];
  for (const [field, value] of values) {
    if (field.type === 'linkMultiple') links.push([field, [...new Set(value as string[])]]);
    else if (field.column !== undefined) row[field.column] = dialect.toDb(field.type, value);
  }
  return { row, links };
}

/** Column conditions for record keys of stored fields (a hook's `expect`); undefined names the first key that is not one. */
export function keyColumns(dialect: Dialect, model: EntityModel, values: Record<string, unknown>): { columns: Record<string, unknown>; notStored?: string } {
  const columns: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    const field = model.byKey.get(key);
    if (!field?.column) return { columns, notStored: key };
    columns[field.column] = dialect.toDb(field.type, value);
  }
  return { columns };
}
