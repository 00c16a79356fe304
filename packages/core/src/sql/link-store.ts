import type { Knex } from 'knex';
import { isLinkField, isStoredField, type EntityModel, type FieldModel, type MultipleLinkField } from '../definition/model';
import { chunks } from '../util/chunks';
import { ownedBy, withNextVersion, type Owner, type RowFilter } from './record-columns';
import { relinkOtherSide } from './join-other-side';
import { prepareStatement, runPrepared } from './prepared';
import type { SqlContext } from './sql-context';

/** The entity type of list options, and the list they belong to. */
export const OPTION_ENTITY = 'ExtensibleEnumOption';
const LIST_ENTITY = 'ExtensibleEnum';

const entity = (sql: SqlContext, name: string) => sql.schema.entity(name) as EntityModel;

/** The select of those of `ids` that name live records of `model` (only `owner`'s when given). */
function liveIdsQuery(sql: SqlContext, model: EntityModel, { ids, owner }: { ids: readonly string[]; owner?: Owner }): Knex.QueryBuilder {
  const qb = sql.db(model.table).select(`${model.table}.id`).whereIn(`${model.table}.id`, ids).andWhere(`${model.table}.deleted`, sql.dialect.live as never);
  if (owner) ownedBy(model, owner)(qb);
  return qb;
}

/**
 * Of `ids`, those naming live records of `target` (only `owner`'s, and those `within` keeps, when
 * given): one query per 1,000 ids; that of one id without row rules (a link of a single write) is
 * compiled once.
 */
export async function liveIdsOf(sql: SqlContext, target: string, { ids, owner, within }: { ids: Iterable<string>; owner?: Owner; within?: RowFilter }): Promise<Set<string>> {
  const model = entity(sql, target);
  const found = new Set<string>();
  for (const part of chunks([...new Set(ids)], 1000)) {
    let rows: { id: string }[];
    if (part.length === 1 && !within) {
      const statement = sql.statements.get(`live:${model.table}:${owner ? 'own' : 'all'}`, () =>
        prepareStatement('rows', (param) => liveIdsQuery(sql, model, { ids: [param('id')], owner: owner && { userId: param('user') } })),
      );
      rows = await runPrepared(sql, statement, { id: part[0], user: owner?.userId });
    } else {
      const qb = liveIdsQuery(sql, model, { ids: part, owner });
      within?.(qb);
      rows = await qb;
    }
    for (const r of rows) found.add(r.id);
  }
  return found;
}

/** The id of the live option list with this code. */
export async function optionListId(sql: SqlContext, code: string): Promise<string | undefined> {
  const row = await sql.db(entity(sql, LIST_ENTITY).table).select('id').where({ code, deleted: sql.dialect.live }).first();
  return row?.id as string | undefined;
}

/** Of `ids`, those naming live options of the list `listId`. */
export async function optionIdsInList(sql: SqlContext, { listId, ids }: { listId: string; ids: Iterable<string> }): Promise<Set<string>> {
  const options = entity(sql, OPTION_ENTITY);
  const found = new Set<string>();
  for (const part of chunks([...new Set(ids)], 1000)) {
    const rows = await sql.db(options.table).select('id').whereIn('id', part).andWhere({ extensible_enum_id: listId, deleted: sql.dialect.live });
    for (const r of rows as { id: string }[]) found.add(r.id);
  }
  return found;
}

/** The codes of a list's live options that are `base` or start with `base_`. */
export async function optionCodesLike(sql: SqlContext, { listId, base }: { listId: string; base: string }): Promise<Set<string>> {
  const options = entity(sql, OPTION_ENTITY);
  const escaped = base.replace(/[\\%_]/g, (c) => `\\${c}`);
  const rows = await sql
    .db(options.table)
    .select('code')
    .where({ extensible_enum_id: listId, deleted: sql.dialect.live })
    .andWhere((w) => void w.where('code', base).orWhereRaw(`code like ? escape '\\'`, [`${escaped}\\_%`]));
  return new Set((rows as { code: string }[]).map((r) => r.code));
}

/** What a found record must match: the values of its fields, the option list it sits in, whose it must be, the row rules. */
export interface RecordMatch {
  fields: readonly [FieldModel, unknown][];
  listId?: string;
  owner?: Owner;
  within?: RowFilter;
}

/** Ids of (at most two) live records of `target` whose fields equal the given values. */
export async function findMatching(sql: SqlContext, target: EntityModel, { fields, listId, owner, within }: RecordMatch): Promise<string[]> {
  const { db, dialect } = sql;
  const t = target.table;
  const qb = db(t).select(`${t}.id`).where(`${t}.deleted`, dialect.live as never).orderBy(`${t}.id`).limit(2);
  if (owner) ownedBy(target, owner)(qb);
  within?.(qb);
  for (const [f, value] of fields) {
    if (!isStoredField(f)) continue;
    if (value === null) qb.whereNull(`${t}.${f.column}`);
    else qb.where(`${t}.${f.column}`, dialect.toDb(f.type, value) as never);
  }
  if (listId) qb.where(`${t}.extensible_enum_id`, listId);
  return (await qb).map((r: { id: string }) => r.id);
}

/** Current ids of a multiple link of one record (live targets only). */
export async function currentLinkIds(sql: SqlContext, field: MultipleLinkField, ownerId: string): Promise<string[]> {
  const { db, dialect } = sql;
  if (field.linkKind === 'hasMany') {
    const target = entity(sql, field.target);
    const rows = await db(target.table).select('id').where(field.foreignColumn, ownerId).andWhere('deleted', dialect.live as never);
    return rows.map((r: { id: string }) => r.id);
  }
  const { join } = field;
  const rows = await db(join.table).select({ id: join.targetColumn }).where(join.ownColumn, ownerId);
  return rows.map((r: { id: string }) => r.id);
}

/**
 * The other records a write of a link changed: those of a one-to-many link whose own link column
 * (`key` of `entityType`) now points at another record or at none, or those of the other side of
 * a many-to-many link whose list (`key`) gained or lost the record written. Each is a change of
 * that record too (`action` when it is not `Relate`/`Unrelate` by whether it points anywhere now).
 */
export interface MovedLinks {
  entityType: string;
  key: string;
  moved: { id: string; was: unknown; became: unknown; action?: 'Relate' | 'Unrelate' | 'Update'; ownerId: string | null; assigneeId: string | null }[];
}

/**
 * Makes the multiple link `field` of the record `ownerId` hold exactly `ids` (it holds `previous`);
 * answers the other records it changed: of a one-to-many link, those whose link column it moved; of
 * a many-to-many link, those of the other side whose list changed.
 */
export async function writeMultipleLink(
  sql: SqlContext,
  field: MultipleLinkField,
  { ownerId, ids, previous }: { ownerId: string; ids: readonly string[]; previous: readonly string[] },
): Promise<MovedLinks | undefined> {
  const { db } = sql;
  const next = new Set(ids);
  const before = new Set(previous);
  const added = [...next].filter((id) => !before.has(id));
  const removed = [...before].filter((id) => !next.has(id));
  if (field.linkKind === 'hasMany') {
    if (!added.length && !removed.length) return undefined;
    const target = entity(sql, field.target);
    const fk = field.foreignColumn;
    const key = target.fields.find((f) => f.type === 'link' && f.column === fk)?.key ?? fk;
    const assigned = target.field.get('assignedUser');
    const columns = ['id', fk, 'created_by_id', ...(assigned?.type === 'link' ? [assigned.column] : [])];
    // The live rows, locked in id order as they are read (where the database locks rows): only
    // those whose link moves are written, each with a new version and a change, never a row
    // deleted or moved meanwhile (its version would move without a change, or a change be logged
    // for a write that matched nothing).
    const rows: Record<string, string | null>[] = [];
    for (const part of chunks([...added, ...removed].sort(), 1000)) {
      const select = db(target.table).select(columns).whereIn('id', part).andWhere('deleted', sql.dialect.live as never);
      rows.push(...((await (sql.dialect.locksRows ? select.orderBy('id').forUpdate() : select)) as Record<string, string | null>[]));
    }
    const adding = new Set(added);
    const moving = rows.filter((row) => (adding.has(row.id as string) ? row[fk] !== ownerId : row[fk] === ownerId));
    const movingIds = (adds: boolean) => moving.filter((row) => adding.has(row.id as string) === adds).map((row) => row.id as string);
    // The listed records change too: their link points elsewhere, so their version moves on.
    for (const part of chunks(movingIds(false), 1000)) await db(target.table).update(withNextVersion(sql, { [fk]: null })).whereIn('id', part);
    for (const part of chunks(movingIds(true), 1000)) await db(target.table).update(withNextVersion(sql, { [fk]: ownerId })).whereIn('id', part);
    const moved = moving.map((row) => ({ id: row.id as string, was: row[fk] ?? null, became: adding.has(row.id as string) ? ownerId : null, ownerId: row.created_by_id ?? null, assigneeId: assigned?.type === 'link' ? (row[assigned.column] ?? null) : null }));
    return { entityType: target.name, key, moved };
  }
  const { join } = field;
  if (removed.length) await db(join.table).delete().where(join.ownColumn, ownerId).whereIn(join.targetColumn, removed);
  if (added.length) await db(join.table).insert(added.map((id) => ({ [join.ownColumn]: ownerId, [join.targetColumn]: id })));
  const pairs = (ids: string[]) => ids.map((id) => [ownerId, id] as const);
  return relinkOtherSide(sql, field, { added: pairs(added), removed: pairs(removed), skip: new Set([ownerId]) });
}

/**
 * Locks, for the rest of the transaction, a record's row and the rows of the records on the other
 * side of its multiple links that a link write will change (`targets`, by field), in one order
 * for every transaction: by table name, then id (where the database locks rows). Two requests
 * that link one pair of records from both sides then wait for each other instead of each locking
 * its own record first and the other one next, a deadlock.
 */
export async function lockLinkedRows(sql: SqlContext, { model, id, targets }: { model: EntityModel; id: string; targets: ReadonlyMap<MultipleLinkField, readonly string[]> }): Promise<void> {
  await lockRowsInOrder(sql, { model, ids: [id], targets });
}

/**
 * Locks, for the rest of the transaction, the rows of some records of `model` and of the records
 * on the other side of their multiple links (`targets`, by field), in the order of
 * `lockLinkedRows`: by table name, then id (where the database locks rows).
 */
export async function lockRowsInOrder(sql: SqlContext, { model, ids, targets }: { model: EntityModel; ids: readonly string[]; targets: ReadonlyMap<MultipleLinkField, Iterable<string>> }): Promise<void> {
  const { db, dialect } = sql;
  if (!dialect.locksRows) return;
  const byTable = new Map<string, Set<string>>([[model.table, new Set(ids)]]);
  for (const [field, others] of targets) {
    const table = entity(sql, field.target).table;
    const set = byTable.get(table) ?? new Set<string>();
    for (const other of others) set.add(other);
    byTable.set(table, set);
  }
  for (const table of [...byTable.keys()].sort()) {
    for (const part of chunks([...(byTable.get(table) ?? [])].sort(), 1000)) await db(table).select('id').whereIn('id', part).orderBy('id').forUpdate();
  }
}

/** After a permanent delete: no link anywhere keeps pointing at the removed record. */
export async function detachEverywhere(sql: SqlContext<Knex.Transaction>, model: EntityModel, id: string): Promise<void> {
  const { db, schema } = sql;
  const joins = new Set<string>();
  for (const other of schema.entities.values()) {
    for (const f of other.fields) {
      if (f.system || !isLinkField(f) || f.target !== model.name) continue;
      if (f.type === 'link') await db(other.table).update(withNextVersion(sql, { [f.column]: null })).where(f.column, id);
      if (f.linkKind === 'manyToMany' && !joins.has(f.join.table)) {
        joins.add(f.join.table);
        await db(f.join.table).delete().where(f.join.targetColumn, id);
      }
    }
  }
  for (const f of model.fields) {
    if (f.type === 'linkMultiple' && f.linkKind === 'manyToMany' && !joins.has(`own:${f.join.table}`)) {
      joins.add(`own:${f.join.table}`);
      await db(f.join.table).delete().where(f.join.ownColumn, id);
    }
  }
}
