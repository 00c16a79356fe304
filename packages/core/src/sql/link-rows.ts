import type { Knex } from 'knex';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel, MultipleLinkField } from '../definition/model';
import { prepareStatement, runPrepared } from './prepared';
import { nameSql } from './read-query';
import type { RowFilter } from './record-columns';
import type { SqlContext } from './sql-context';

/** One linked record of a multiple link: owner id, linked id, linked record's name. */
type LinkRow = [owner: string, id: string, name: string | null];

/**
 * The linked records a reader sees through some one-to-many lists (`Brand.products`), by field:
 * those of the target's rows the filter keeps (the reader's `own` records, its row rules). The
 * other links show every live linked record.
 */
export type LinkScopes = ReadonlyMap<FieldModel, RowFilter>;

/**
 * The query of the linked records of `ownerIds` through a multiple link, as one JSON text (see
 * `linkRows`); `within` keeps only some target rows (a one-to-many list, whose target table goes
 * by its own name).
 */
function linkRowsQuery(sql: SqlContext, field: MultipleLinkField, { ownerIds, within }: { ownerIds: readonly string[]; within?: RowFilter }): Knex.QueryBuilder {
  const { db, schema, dialect } = sql;
  const target = schema.entity(field.target) as EntityModel;
  const aggregate = (owner: string, alias: string) =>
    db.raw(`${dialect.jsonArrayRows(3)} as ??`, [db.ref(owner), db.ref(`${alias}.id`), nameSql(db, target, { alias }), db.ref(`${alias}.id`), 'l']);
  if (field.linkKind === 'hasMany') {
    const owner = `${target.table}.${field.foreignColumn}`;
    const qb = db(target.table).select(aggregate(owner, target.table)).whereIn(owner, ownerIds).andWhere(`${target.table}.deleted`, dialect.live as never);
    within?.(qb);
    return qb;
  }
  const { join } = field;
  return db({ j: join.table })
    .join({ t: target.table }, 't.id', `j.${join.targetColumn}`)
    .select(aggregate(`j.${join.ownColumn}`, 't'))
    .whereIn(`j.${join.ownColumn}`, ownerIds)
    .andWhere('t.deleted', dialect.live as never);
}

/**
 * The linked records of `ownerIds` through a multiple link, ordered by linked id: one query that
 * answers them as one JSON text (a page's hundreds of link rows cost the driver one string). The
 * query of one owner (a single record) is compiled once, unless some rows are kept out.
 */
async function linkRows(sql: SqlContext, field: MultipleLinkField, { ownerIds, within }: { ownerIds: string[]; within?: RowFilter }): Promise<LinkRow[]> {
  let row: { l: string | null } | undefined;
  if (ownerIds.length === 1 && !within) {
    const through = field.linkKind === 'hasMany' ? `${field.target}.${field.foreignColumn}` : `${field.join.table}.${field.join.ownColumn}`;
    const statement = sql.statements.get(`links:${through}`, () => prepareStatement('first', (param) => linkRowsQuery(sql, field, { ownerIds: [param('owner')] })));
    row = await runPrepared(sql, statement, { owner: ownerIds[0] });
  } else {
    [row] = (await linkRowsQuery(sql, field, { ownerIds, within })) as { l: string | null }[];
  }
  return row?.l ? (JSON.parse(row.l) as LinkRow[]) : [];
}

/**
 * Loads `<link>Ids` and `<link>Names` of multiple links: one query per link field, whatever the
 * page size (that of a single record is compiled once). `scopes` keeps some lists to the linked
 * records a reader may see.
 */
export async function loadMultipleLinks(sql: SqlContext, { fields, records, scopes }: { fields: readonly FieldModel[]; records: ApiRecord[]; scopes?: LinkScopes }): Promise<void> {
  if (records.length === 0) return;
  const ids = records.map((r) => r.id);
  for (const field of fields) {
    if (field.type !== 'linkMultiple') continue;
    const namesKey = `${field.name}Names`;
    const byOwner = new Map<string, { ids: string[]; names: Record<string, string | null> }>();
    for (const r of records) {
      const entry = { ids: [] as string[], names: {} as Record<string, string | null> };
      byOwner.set(r.id, entry);
      r[field.key] = entry.ids;
      r[namesKey] = entry.names;
    }
    for (const [owner, id, name] of await linkRows(sql, field, { ownerIds: ids, within: scopes?.get(field) })) {
      const entry = byOwner.get(owner);
      if (!entry) continue;
      entry.ids.push(id);
      entry.names[id] = name;
    }
  }
}
