import type { Knex } from 'knex';
import { isStoredField, type EntityModel, type FieldModel, type ManyToManyField, type MultipleLinkField, type SingleLinkField } from '../definition/model';
import { chunks } from '../util/chunks';
import { modifiedColumns, ownedBy, withNextVersion, type Owner, type RowChange, type RowFilter } from './record-columns';
import { liveIds, relinkOtherSide } from './join-other-side';
import { prepareStatement, runPrepared } from './prepared';
import type { SqlContext } from './sql-context';

/** Join rows one insert writes: SQLite builds a multi-row insert as a compound SELECT of at most 500 terms. */
const JOIN_ROWS_PER_INSERT = 500;

/** The entity type of list options, and the list they belong to. */
export const OPTION_ENTITY = 'ExtensibleEnumOption';
const LIST_ENTITY = 'ExtensibleEnum';

const entity = (sql: SqlContext, name: string) => sql.schema.entity(name) as EntityModel;

/**
 * How a check that records are live holds them until the transaction it runs in ends, so that a
 * write linking to them commits before a permanent delete of one of them (which locks its row
 * first, `purgeRow`) and that delete detaches the new link, or the write finds the record gone
 * once the delete committed. `share` as a foreign key's check (`for key share`: writes that link
 * the same records do not wait for each other); `update` for records the write changes too and
 * locks anyway (the other side of a multiple link: taking the weaker lock first would deadlock two
 * such writes), in id order.
 */
export type Hold = 'share' | 'update';

/**
 * Whether a check can hold what it reads: in a transaction (else there is nothing to hold it for),
 * where writers lock rows (not SQLite, which writes one transaction at a time).
 */
const canHold = (sql: SqlContext): boolean => sql.dialect.locksRows && (sql.db as Knex.Transaction).isTransaction === true;

/** The select of those of `ids` that name live records of `model` (only `owner`'s when given), held so when given (`Hold`). */
function liveIdsQuery(sql: SqlContext, model: EntityModel, { ids, owner, hold }: { ids: readonly string[]; owner?: Owner; hold?: Hold }): Knex.QueryBuilder {
  const qb = sql.db(model.table).select(`${model.table}.id`).whereIn(`${model.table}.id`, ids).andWhere(`${model.table}.deleted`, sql.dialect.live as never);
  if (owner) ownedBy(model, owner)(qb);
  if (hold === 'share') qb.forKeyShare(model.table);
  if (hold === 'update') qb.orderBy(`${model.table}.id`).forNoKeyUpdate(model.table);
  return qb;
}

/**
 * Of `ids`, those naming live records of `target` (only `owner`'s, and those `within` keeps, when
 * given), held until the transaction ends with `hold` (see `Hold`): one query per 1,000 ids; that
 * of one id without row rules (a link of a single write) is compiled once.
 */
export async function liveIdsOf(
  sql: SqlContext,
  target: string,
  { ids, owner, within, hold }: { ids: Iterable<string>; owner?: Owner; within?: RowFilter; hold?: Hold },
): Promise<Set<string>> {
  const model = entity(sql, target);
  const found = new Set<string>();
  const held = hold && canHold(sql) ? hold : undefined;
  for (const part of chunks([...new Set(ids)].sort(), 1000)) {
    let rows: { id: string }[];
    if (part.length === 1 && !within) {
      const statement = sql.statements.get(`live:${model.table}:${owner ? 'own' : 'all'}:${held ?? ''}`, () =>
        prepareStatement('rows', (param) => liveIdsQuery(sql, model, { ids: [param('id')], owner: owner && { userId: param('user') }, hold: held })),
      );
      rows = await runPrepared(sql, statement, { id: part[0], user: owner?.userId });
    } else {
      const qb = liveIdsQuery(sql, model, { ids: part, owner, hold: held });
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

/** Of `ids`, those naming live options of the list `listId`, held until the transaction ends (`Hold` share). */
export async function optionIdsInList(sql: SqlContext, { listId, ids }: { listId: string; ids: Iterable<string> }): Promise<Set<string>> {
  const options = entity(sql, OPTION_ENTITY);
  const found = new Set<string>();
  for (const part of chunks([...new Set(ids)], 1000)) {
    const qb = sql.db(options.table).select('id').whereIn('id', part).andWhere({ extensible_enum_id: listId, deleted: sql.dialect.live });
    if (canHold(sql)) qb.forKeyShare(options.table);
    for (const r of (await qb) as { id: string }[]) found.add(r.id);
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
  const rows = await db(join.table).select({ id: join.targetColumn }).where(join.ownColumn, ownerId).whereIn(join.targetColumn, liveIds(sql, field.target));
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
  /** When they changed: the time of the modification they recorded. */
  at: string;
  moved: { id: string; was: unknown; became: unknown; action?: 'Relate' | 'Unrelate' | 'Update'; ownerId: string | null; assigneeId: string | null }[];
}

/**
 * Makes the multiple link `field` of the record `ownerId` hold exactly `ids` (it holds `previous`);
 * answers the other records it changed: of a one-to-many link, those whose link column it moved
 * (they record `change` as their modification, as an update of that column would); of a
 * many-to-many link, those of the other side whose list changed (they record it too).
 */
export async function writeMultipleLink(
  sql: SqlContext,
  field: MultipleLinkField,
  { ownerId, ids, previous, change }: { ownerId: string; ids: readonly string[]; previous: readonly string[]; change: RowChange },
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
      rows.push(...((await (sql.dialect.locksRows ? select.orderBy('id').forNoKeyUpdate() : select)) as Record<string, string | null>[]));
    }
    const adding = new Set(added);
    const moving = rows.filter((row) => (adding.has(row.id as string) ? row[fk] !== ownerId : row[fk] === ownerId));
    const movingIds = (adds: boolean) => moving.filter((row) => adding.has(row.id as string) === adds).map((row) => row.id as string);
    // The listed records change too: their link points elsewhere, so their version moves on.
    const modified = modifiedColumns(change);
    for (const part of chunks(movingIds(false), 1000)) await db(target.table).update(withNextVersion(sql, { [fk]: null, ...modified })).whereIn('id', part);
    for (const part of chunks(movingIds(true), 1000)) await db(target.table).update(withNextVersion(sql, { [fk]: ownerId, ...modified })).whereIn('id', part);
    const moved = moving.map((row) => ({ id: row.id as string, was: row[fk] ?? null, became: adding.has(row.id as string) ? ownerId : null, ownerId: row.created_by_id ?? null, assigneeId: assigned?.type === 'link' ? (row[assigned.column] ?? null) : null }));
    return { entityType: target.name, key, moved, at: change.at };
  }
  const { join } = field;
  for (const part of chunks(removed, 1000)) await db(join.table).delete().where(join.ownColumn, ownerId).whereIn(join.targetColumn, part);
  for (const part of chunks(added, JOIN_ROWS_PER_INSERT)) await db(join.table).insert(part.map((id) => ({ [join.ownColumn]: ownerId, [join.targetColumn]: id })));
  const pairs = (ids: string[]) => ids.map((id) => [ownerId, id] as const);
  return relinkOtherSide(sql, field, { added: pairs(added), removed: pairs(removed), skip: new Set([ownerId]), change });
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
    for (const part of chunks([...(byTable.get(table) ?? [])].sort(), 1000)) await db(table).select('id').whereIn('id', part).orderBy('id').forNoKeyUpdate();
  }
}

/** A stored link that can name a record of the entity type a permanent delete removes one of. */
type LinkTo = SingleLinkField | ManyToManyField;

/**
 * The records of one entity type that link the record a permanent delete removes, live, as read
 * (and locked) before it: their ownership, the single links that name it, and the lists of their
 * many-to-many links that hold it (all their pairs, as stored).
 */
interface Linking {
  model: EntityModel;
  fields: readonly LinkTo[];
  rows: Record<string, string | null>[];
  lists: Map<ManyToManyField, Map<string, string[]>>;
}

/** What a permanent delete changed of one record's attribute values: `{key: {was, became}}` by their virtual fields, and how to log it. */
export interface ValueLoss {
  action: 'Update' | 'Unrelate';
  diff: Record<string, { was: unknown; became: unknown }>;
}

/**
 * The attribute values a permanent delete changes besides the removed record's own (those of a
 * removed attribute, link values that name the removed record): the records holding them, by
 * entity type (the select of their ids, locked with the records that link it), and their clearing.
 */
export interface PurgedValues {
  holders: ReadonlyMap<EntityModel, () => Knex.QueryBuilder>;
  /** Clears the values, of every record (in the bin too); answers what changed of the live records `live`, by entity type and id. */
  clear(live: ReadonlyMap<EntityModel, readonly string[]>): Promise<Map<EntityModel, Map<string, ValueLoss>>>;
}

/** The stored links of each entity type that can name a record of `model`, by entity type. */
function linksTo(sql: SqlContext, model: EntityModel): Map<EntityModel, LinkTo[]> {
  const found = new Map<EntityModel, LinkTo[]>();
  for (const other of sql.schema.entities.values()) {
    const fields = other.fields.filter((f): f is LinkTo => !f.system && (f.type === 'link' || (f.type === 'linkMultiple' && f.linkKind === 'manyToMany')) && f.target === model.name);
    if (fields.length) found.set(other, fields);
  }
  return found;
}

/** A required single link of another record that names a record a permanent delete would remove. */
export interface RequiredLink {
  model: EntityModel;
  field: SingleLinkField;
}

/**
 * The first required single link (a unit's measure, an option's list) by which a record, live or
 * in the bin, other than `id` itself, names `id` of `model`: a permanent delete would leave that
 * record without a value it must have (and one in the bin would be restored so). One statement
 * per such field, until one names it.
 */
export async function requiredLinkTo(sql: SqlContext, model: EntityModel, id: string): Promise<RequiredLink | undefined> {
  for (const [other, fields] of linksTo(sql, model)) {
    for (const field of fields) {
      if (field.type !== 'link' || field.def.required !== true) continue;
      const qb = sql.db(other.table).first('id').where(field.column, id);
      if (other === model) qb.andWhereNot('id', id);
      if (await qb) return { model: other, field };
    }
  }
  return undefined;
}

/** The owners of a many-to-many link (of `field`'s side) whose list holds `id`. */
const ownersOf = (sql: SqlContext, field: ManyToManyField, id: string) => sql.db(field.join.table).select(field.join.ownColumn).where(field.join.targetColumn, id);

/**
 * Before a permanent delete of `id`: reads the live records that link it (or hold attribute values
 * `values` changes), each entity type in one statement, and locks their rows with the record's own,
 * in the order updates and link routes lock rows (by table name, then id; where the database locks
 * rows): the delete then waits for the writes of those records instead of deadlocking with them.
 * The record's own row is locked for the delete (`for update`), so it also waits for the writes
 * that hold it while they link it (`Hold`), and those may have linked records of tables read
 * before its turn: the records are read and locked a second time once every lock is held, which
 * finds those (locked out of order; rare) and waits for nothing else.
 */
export async function lockLinking(sql: SqlContext<Knex.Transaction>, model: EntityModel, { id, values }: { id: string; values?: PurgedValues }): Promise<Linking[]> {
  const links = linksTo(sql, model);
  for (const other of values?.holders.keys() ?? []) if (!links.has(other)) links.set(other, []);
  if (!sql.dialect.locksRows) return lockLinkingOnce(sql, { model, id, values, links });
  links.set(model, links.get(model) ?? []);
  await lockLinkingOnce(sql, { model, id, values, links });
  return lockLinkingOnce(sql, { model, id, values, links });
}

/** One pass of `lockLinking` over the entity types that may link the record (`links`). */
async function lockLinkingOnce(
  sql: SqlContext<Knex.Transaction>,
  { model, id, values, links }: { model: EntityModel; id: string; values?: PurgedValues; links: Map<EntityModel, LinkTo[]> },
): Promise<Linking[]> {
  const { db, dialect } = sql;
  const found: Linking[] = [];
  for (const [other, fields] of [...links].sort(([a], [b]) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0))) {
    const assigned = other.field.get('assignedUser');
    const columns = ['id', 'created_by_id', ...(assigned?.type === 'link' ? [assigned.column] : []), ...fields.filter((f) => f.type === 'link').map((f) => f.column)];
    const select = db(other.table)
      .select([...new Set(columns)])
      .where((w) => {
        // The record itself, deleted or not, is locked in its table's turn.
        if (other === model) w.where('id', id);
        const holders = values?.holders.get(other);
        if (!fields.length && !holders) return;
        w.orWhere((live) =>
          live.where('deleted', dialect.live as never).andWhere((linked) => {
            for (const f of fields) {
              if (f.type === 'link') linked.orWhere(f.column, id);
              else linked.orWhereIn('id', ownersOf(sql, f, id));
            }
            if (holders) linked.orWhereIn('id', holders());
          }),
        );
      });
    // The records that link it are written (`for no key update`: no wait for writes that only hold them).
    const locked = dialect.locksRows ? (other === model ? select.orderBy('id').forUpdate() : select.orderBy('id').forNoKeyUpdate()) : select;
    const rows = ((await locked) as Record<string, string | null>[]).filter((r) => r.id !== id);
    const lists = new Map<ManyToManyField, Map<string, string[]>>();
    for (const f of fields) {
      if (f.type !== 'linkMultiple' || !rows.length) continue;
      const { table, ownColumn, targetColumn } = f.join;
      const byOwner = new Map<string, string[]>();
      for (const pair of (await db(table).select({ o: ownColumn, id: targetColumn }).whereIn(ownColumn, ownersOf(sql, f, id))) as { o: string; id: string }[]) {
        byOwner.set(pair.o, [...(byOwner.get(pair.o) ?? []), pair.id]);
      }
      lists.set(f, byOwner);
    }
    if (rows.length) found.push({ model: other, fields, rows, lists });
  }
  return found;
}

/** A record whose stored links a permanent delete changed: the link fields that named the removed record, before and after. */
export interface DetachedRecord {
  entityType: string;
  id: string;
  action: ValueLoss['action'];
  diff: Record<string, { was: unknown; became: unknown }>;
  ownerId: string | null;
  assigneeId: string | null;
}

/**
 * After a permanent delete: no link anywhere keeps pointing at the removed record, nor do the
 * attribute values `values` names. Each live record that linked it or held such a value (`linking`,
 * read and locked by `lockLinking`) gets a new version and the delete's modification (`change`),
 * once however many of its links and values named it, and answers what changed of them. Records
 * in the bin lose the link too, with neither a new version nor a change, as link writes leave
 * records in the bin alone (their restore is logged, and a client reads them again then); so does
 * a record a write linked to the removed one after `lockLinking` read (a link does not lock its
 * target). Set-based: one statement per link field and per 1,000 records.
 */
export async function detachEverywhere(
  sql: SqlContext<Knex.Transaction>,
  model: EntityModel,
  { id, linking, values, change }: { id: string; linking: readonly Linking[]; values?: PurgedValues; change: RowChange },
): Promise<DetachedRecord[]> {
  const { db } = sql;
  const detached: DetachedRecord[] = [];
  const losses = await values?.clear(new Map(linking.map((l) => [l.model, l.rows.map((r) => r.id as string)])));
  for (const { model: other, fields, rows, lists } of linking) {
    const assigned = other.field.get('assignedUser');
    const changed: string[] = [];
    for (const row of rows) {
      const diff: DetachedRecord['diff'] = {};
      for (const f of fields) {
        if (f.type === 'link') {
          if (row[f.column] === id) diff[f.key] = { was: id, became: null };
          continue;
        }
        const was = lists.get(f)?.get(row.id as string);
        if (was?.includes(id)) diff[f.key] = { was, became: was.filter((x) => x !== id) };
      }
      const assigneeId = assigned?.type === 'link' ? (row[assigned.column] ?? null) : null;
      // The attribute values it lost go into the same change (an Unrelate when it lost a link).
      const loss = losses?.get(other)?.get(row.id as string);
      const action = loss && !Object.keys(diff).length ? loss.action : 'Unrelate';
      Object.assign(diff, loss?.diff);
      if (!Object.keys(diff).length) continue;
      changed.push(row.id as string);
      detached.push({ entityType: other.name, id: row.id as string, action, diff, ownerId: row.created_by_id ?? null, assigneeId });
    }
    for (const part of chunks(changed, 1000)) await db(other.table).update(withNextVersion(sql, modifiedColumns(change))).whereIn('id', part);
  }
  const joins = new Set<string>();
  const unpair = async (table: string, column: string) => {
    if (joins.has(`${table}.${column}`)) return;
    joins.add(`${table}.${column}`);
    await db(table).delete().where(column, id);
  };
  for (const [other, fields] of linksTo(sql, model)) {
    for (const f of fields) {
      if (f.type === 'link') await db(other.table).update({ [f.column]: null }).where(f.column, id);
      else await unpair(f.join.table, f.join.targetColumn);
    }
  }
  for (const f of model.fields) if (f.type === 'linkMultiple' && f.linkKind === 'manyToMany') await unpair(f.join.table, f.join.ownColumn);
  return detached;
}
