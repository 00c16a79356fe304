import type { Knex } from 'knex';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/normalize';
import { ApiError } from '../errors';
import type { Dialect } from './dialects/dialect';
import { live } from './read-query';

/**
 * Checks that every id written into a link names a live record of its target, with one query per
 * target entity. A missing one fails the whole write.
 */
export async function assertLinkTargets(
  trx: Knex.Transaction,
  schema: SchemaModel,
  dialect: Dialect,
  values: Map<FieldModel, unknown>,
): Promise<void> {
  const wanted = new Map<string, { ids: Set<string>; fields: Map<string, string> }>();
  for (const [field, value] of values) {
    if (field.type !== 'link' && field.type !== 'linkMultiple') continue;
    const ids = field.type === 'link' ? (value === null ? [] : [value as string]) : (value as string[]);
    let entry = wanted.get(field.target as string);
    if (!entry) wanted.set(field.target as string, (entry = { ids: new Set(), fields: new Map() }));
    for (const id of ids) {
      entry.ids.add(id);
      if (!entry.fields.has(id)) entry.fields.set(id, field.key);
    }
  }
  for (const [targetName, { ids, fields }] of wanted) {
    if (ids.size === 0) continue;
    const target = schema.entity(targetName) as EntityModel;
    const found = new Set(
      (await trx(target.table).select('id').whereIn('id', [...ids]).andWhere('deleted', live(dialect) as never)).map(
        (r: { id: string }) => r.id,
      ),
    );
    const missing = [...ids].filter((id) => !found.has(id));
    if (missing.length) {
      throw new ApiError('CORE_INVALID_LINK', `${targetName} '${missing[0]}' not found (${fields.get(missing[0])})`, {
        details: { entity: targetName, field: fields.get(missing[0]), ids: missing },
      });
    }
  }
}

/** Current ids of a multiple link of one record (live targets only). */
export async function currentLinkIds(
  trx: Knex.Transaction,
  schema: SchemaModel,
  dialect: Dialect,
  field: FieldModel,
  ownerId: string,
): Promise<string[]> {
  const target = schema.entity(field.target as string) as EntityModel;
  if (field.linkKind === 'hasMany') {
    const rows = await trx(target.table).select('id').where(field.foreignColumn as string, ownerId).andWhere('deleted', live(dialect) as never);
    return rows.map((r: { id: string }) => r.id);
  }
  const join = field.join as NonNullable<FieldModel['join']>;
  const rows = await trx(join.table).select({ id: join.targetColumn }).where(join.ownColumn, ownerId);
  return rows.map((r: { id: string }) => r.id);
}

/** Makes a multiple link of one record hold exactly `ids`. */
export async function writeMultipleLink(
  trx: Knex.Transaction,
  schema: SchemaModel,
  field: FieldModel,
  ownerId: string,
  ids: readonly string[],
  previous: readonly string[],
): Promise<void> {
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
export async function detachEverywhere(trx: Knex.Transaction, schema: SchemaModel, model: EntityModel, id: string): Promise<void> {
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
