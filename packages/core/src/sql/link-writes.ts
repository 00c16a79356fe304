import type { Knex } from 'knex';
import type { EntityModel, FieldModel } from '../definition/normalize';
import { ApiError } from '../errors';
import { live } from './read-query';
import type { SqlContext } from './sql-context';

/** Ids a link value names: none for null, one for a single link, the list for a multiple link. */
export const linkedIds = (value: unknown): readonly string[] => (Array.isArray(value) ? (value as string[]) : value === null || value === undefined ? [] : [value as string]);

/**
 * The ids written into links that name no live record of their target, by target entity: one
 * query per target entity, whatever the number of values. The callers decide what a missing id
 * means (a failed write, a failed item).
 */
export async function missingLinkTargets(sql: SqlContext<Knex.Transaction>, values: Iterable<[FieldModel, unknown]>): Promise<Map<string, Set<string>>> {
  const { db: trx, schema, dialect } = sql;
  const wanted = new Map<string, Set<string>>();
  for (const [field, value] of values) {
    if (field.type !== 'link' && field.type !== 'linkMultiple') continue;
    let ids = wanted.get(field.target as string);
    if (!ids) wanted.set(field.target as string, (ids = new Set()));
    for (const id of linkedIds(value)) ids.add(String(id));
  }
  const missing = new Map<string, Set<string>>();
  for (const [targetName, ids] of wanted) {
    if (ids.size === 0) continue;
    const target = schema.entity(targetName) as EntityModel;
    const rows = await trx(target.table).select('id').whereIn('id', [...ids]).andWhere('deleted', live(dialect) as never);
    for (const r of rows as { id: string }[]) ids.delete(r.id);
    if (ids.size) missing.set(targetName, ids);
  }
  return missing;
}

/** Every id written into a link must name a live record of its target; a missing one fails the whole write. */
export async function assertLinkTargets(sql: SqlContext<Knex.Transaction>, values: Map<FieldModel, unknown>): Promise<void> {
  const missing = await missingLinkTargets(sql, values);
  if (missing.size === 0) return;
  const [[targetName, ids]] = missing;
  const [first] = ids;
  const field = [...values].find(([f, v]) => f.target === targetName && (f.type === 'link' || f.type === 'linkMultiple') && linkedIds(v).includes(first))?.[0];
  throw new ApiError('CORE_INVALID_LINK', `${targetName} '${first}' not found (${field?.key})`, {
    details: { entity: targetName, field: field?.key, ids: [...ids] },
  });
}

/** Current ids of a multiple link of one record (live targets only). */
export async function currentLinkIds(sql: SqlContext<Knex.Transaction>, field: FieldModel, ownerId: string): Promise<string[]> {
  const { db: trx, schema, dialect } = sql;
  const target = schema.entity(field.target as string) as EntityModel;
  if (field.linkKind === 'hasMany') {
    const rows = await trx(target.table).select('id').where(field.foreignColumn as string, ownerId).andWhere('deleted', live(dialect) as never);
    return rows.map((r: { id: string }) => r.id);
  }
  const join = field.join as NonNullable<FieldModel['join']>;
  const rows = await trx(join.table).select({ id: join.targetColumn }).where(join.ownColumn, ownerId);
  return rows.map((r: { id: string }) => r.id);
}

/** Makes the multiple link `field` of the record `ownerId` hold exactly `ids` (it holds `previous`). */
export async function writeMultipleLink(
  sql: SqlContext<Knex.Transaction>,
  field: FieldModel,
  { ownerId, ids, previous }: { ownerId: string; ids: readonly string[]; previous: readonly string[] },
): Promise<void> {
  const { db: trx, schema } = sql;
  const next = new Set(ids);
  const before = new Set(previous);
  const added = [...next].filter((id) => !before.has(id));
  const removed = [...before].filter((id) => !next.has(id));
  if (field.linkKind === 'hasMany') {
    const target = schema.entity(field.target as string) as EntityModel;
    const fk = field.foreignColumn as string;
    if (removed.length) await trx(target.table).update({ [fk]: null }).whereIn('id', removed).andWhere(fk, ownerId);
    if (added.length) await trx(target.table).update({ [fk]: ownerId }).whereIn('id', added);
    return;
  }
  const join = field.join as NonNullable<FieldModel['join']>;
  if (removed.length) await trx(join.table).delete().where(join.ownColumn, ownerId).whereIn(join.targetColumn, removed);
  if (added.length) {
    await trx(join.table).insert(added.map((id) => ({ [join.ownColumn]: ownerId, [join.targetColumn]: id })));
  }
}

/** After a permanent delete: no link anywhere keeps pointing at the removed record. */
export async function detachEverywhere(sql: SqlContext<Knex.Transaction>, model: EntityModel, id: string): Promise<void> {
  const { db: trx, schema } = sql;
  const joins = new Set<string>();
  for (const other of schema.entities.values()) {
    for (const f of other.fields) {
      if (f.system || f.target !== model.name) continue;
      if (f.type === 'link') await trx(other.table).update({ [f.column as string]: null }).where(f.column as string, id);
      if (f.join && !joins.has(f.join.table)) {
        joins.add(f.join.table);
        await trx(f.join.table).delete().where(f.join.targetColumn, id);
      }
    }
  }
  for (const f of model.fields) {
    if (f.join && !joins.has(`own:${f.join.table}`)) {
      joins.add(`own:${f.join.table}`);
      await trx(f.join.table).delete().where(f.join.ownColumn, id);
    }
  }
}
