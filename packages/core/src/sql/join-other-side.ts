import type { Knex } from 'knex';
import type { EntityModel, ManyToManyField, SchemaModel } from '../definition/model';
import { chunks } from '../util/chunks';
import type { MovedLinks } from './link-store';
import { modifiedColumns, withNextVersion, type RowChange } from './record-columns';
import type { SqlContext } from './sql-context';

/** Pairs `[owner, target]` that a write added to and removed from the join table of a many-to-many link. */
export interface JoinDelta {
  added: readonly (readonly [string, string])[];
  removed: readonly (readonly [string, string])[];
}

/** The field of the other side of a many-to-many link (its join table seen from the target), when the target declares one. */
export function otherSideOf(schema: SchemaModel, field: ManyToManyField): ManyToManyField | undefined {
  const target = schema.entity(field.target);
  return target?.fields.find(
    (f): f is ManyToManyField => f !== field && f.type === 'linkMultiple' && f.linkKind === 'manyToMany' && f.join.table === field.join.table && f.join.ownColumn === field.join.targetColumn,
  );
}

/**
 * The ids of the live records of an entity type, as a subquery. A many-to-many write reads, writes
 * and logs only the pairs whose other record is live: a pair with a record in the bin stays as it
 * is (the record gets it back when restored), shows in no list and in no diff, as a read shows it.
 */
export function liveIds(sql: SqlContext, entity: string): Knex.QueryBuilder {
  const model = sql.schema.entity(entity) as EntityModel;
  return sql.db(model.table).select('id').where('deleted', sql.dialect.live as never);
}

/** The owners of each target in some pairs. */
function byTarget(pairs: JoinDelta['added']): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const [own, target] of pairs) owners.set(target, [...(owners.get(target) ?? []), own]);
  return owners;
}

/**
 * After a write changed the pairs of a many-to-many link: a pair is stored for both of its
 * records, so each live record of the other side whose list changed gets a new version and the
 * write's modification (`change`), and the answer says its list before and after (its change:
 * `Relate` when it only gained, `Unrelate` when it only lost, else `Update`). Records in `skip`
 * are logged by the write itself (a record linked to itself). Nothing is read when the target
 * declares no other side.
 */
export async function relinkOtherSide(
  sql: SqlContext,
  field: ManyToManyField,
  { skip, change, ...delta }: JoinDelta & { skip: ReadonlySet<string>; change: RowChange },
): Promise<MovedLinks | undefined> {
  const other = otherSideOf(sql.schema, field);
  if (!other) return undefined;
  const gained = byTarget(delta.added);
  const lost = byTarget(delta.removed);
  const ids = [...new Set([...gained.keys(), ...lost.keys()])].filter((id) => !skip.has(id));
  if (!ids.length) return undefined;
  const { db, dialect } = sql;
  const target = sql.schema.entity(field.target) as EntityModel;
  const assigned = target.field.get('assignedUser');
  const columns = ['id', 'created_by_id', ...(assigned?.type === 'link' ? [assigned.column] : [])];
  const { table, ownColumn, targetColumn } = field.join;
  const rows: Record<string, string | null>[] = [];
  const lists = new Map<string, string[]>();
  // The rows are locked in id order before their versions are counted up (where the database
  // locks rows): two writes that link the same records in other orders then wait for each other
  // instead of each locking one of them and waiting for the other, a deadlock.
  for (const part of chunks([...ids].sort(), 1000)) {
    const select = db(target.table).select(columns).whereIn('id', part).andWhere('deleted', dialect.live as never);
    const found = (await (dialect.locksRows ? select.orderBy('id').forNoKeyUpdate() : select)) as Record<string, string | null>[];
    if (!found.length) continue;
    const live = found.map((r) => r.id as string);
    rows.push(...found);
    await db(target.table).update(withNextVersion(sql, modifiedColumns(change))).whereIn('id', live);
    const pairs = db(table).select({ o: targetColumn, id: ownColumn }).whereIn(targetColumn, live).whereIn(ownColumn, liveIds(sql, other.target));
    for (const pair of (await pairs) as { o: string; id: string }[]) {
      lists.set(pair.o, [...(lists.get(pair.o) ?? []), pair.id]);
    }
  }
  const moved = rows.map((row) => {
    const id = row.id as string;
    const [added, removed] = [gained.get(id) ?? [], lost.get(id) ?? []];
    const became = lists.get(id) ?? [];
    const was = [...became.filter((x) => !added.includes(x)), ...removed];
    const action = added.length && removed.length ? ('Update' as const) : added.length ? ('Relate' as const) : ('Unrelate' as const);
    return { id, was, became, action, ownerId: row.created_by_id ?? null, assigneeId: assigned?.type === 'link' ? (row[assigned.column] ?? null) : null };
  });
  return moved.length ? { entityType: target.name, key: other.key, moved, at: change.at } : undefined;
}
