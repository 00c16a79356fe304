import type { Knex } from 'knex';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel, LinkField, SingleLinkField } from '../definition/model';
import type { Dialect } from './dialects/dialect';
import { VERSION_COLUMN } from './schema-sync';
import type { SqlContext } from './sql-context';
import { quoteName as q } from './dialects/shared';
import { prepareStatement, runNative, type PreparedStatement } from './prepared';
import { ShapeCache } from '../util/shape-cache';
import { chunks } from '../util/chunks';

/** The fields whose first non-empty value names a record in `<link>Name`, before its id. */
export const NAME_FIELDS: readonly string[] = ['name', 'code', 'userName'];

/** Whether a field of an entity type may name a linked record to a reader (`UserAccess.readsThroughLink`). */
export type ShowsField = (entity: string, field: string) => boolean;

/**
 * The columns whose first non-empty value names a record in `<link>Name`: name, code, userName
 * (those `shows` lets name it, when given), id.
 */
export function nameColumns(model: EntityModel, shows?: ShowsField): string[] {
  const cols: string[] = [];
  for (const name of NAME_FIELDS) {
    const column = model.field.get(name)?.column;
    if (column && (!shows || shows(model.name, name))) cols.push(column);
  }
  return [...cols, 'id'];
}

/** The first of some SQL values that is not NULL (SQLite's `coalesce` takes two or more). */
const firstSet = (values: readonly string[]): string => (values.length === 1 ? values[0] : `coalesce(${values.join(', ')})`);

/** SQL naming a record of `model` found under `alias`: the first of its name columns (see `nameColumns`) that is set. */
export function nameSql(db: Knex | Knex.Transaction, model: EntityModel, { alias, shows }: { alias: string; shows?: ShowsField }): Knex.Raw {
  const cols = nameColumns(model, shows).map((c) => `${alias}.${c}`);
  return db.raw(firstSet(cols.map(() => `nullif(??, '')`)), cols);
}


/** The names of the live records of `model` with these ids (see `nameSql`), by id. */
export async function namesOf(sql: SqlContext, model: EntityModel, { ids, shows }: { ids: readonly string[]; shows?: ShowsField }): Promise<Map<string, string>> {
  const { db, dialect } = sql;
  const names = new Map<string, string>();
  for (const part of chunks(ids, 1000)) {
    const rows = (await db(model.table)
      .select({ id: `${model.table}.id` })
      .select(db.raw('? as ??', [nameSql(db, model, { alias: model.table, shows }), 'n']))
      .whereIn(`${model.table}.id`, part)
      .andWhere(`${model.table}.deleted`, dialect.live as never)) as { id: string; n: string }[];
    for (const row of rows) names.set(row.id, row.n);
  }
  return names;
}

/** Alias of the joined table that names a belongsTo link. */
const linkAlias = (field: FieldModel) => `l_${field.name}`;

/** Left-joins the live record a single link of `model` points at (under linkAlias) and answers the SQL of its name. */
function joinLinkName(sql: SqlContext, qb: Knex.QueryBuilder, link: { model: EntityModel; field: SingleLinkField }): Knex.Raw {
  const { db, schema, dialect } = sql;
  const { model, field } = link;
  const target = schema.entity(field.target) as EntityModel;
  const alias = linkAlias(field);
  qb.leftJoin({ [alias]: target.table }, (j) =>
    j.on(`${alias}.id`, '=', `${model.table}.${field.column}`).andOn(`${alias}.deleted`, '=', db.raw('?', [dialect.live])),
  );
  return nameSql(db, target, { alias });
}

/** The subquery a page's rows are picked by (pageKeys), and its columns. */
const PAGE = { alias: '__page', id: '__id', sort: '__sort' } as const;
/** The key under which a page's rows carry the number of all records the list matches (pageKeys `withTotal`). */
export const PAGE_TOTAL = '__total';

/** Selects the stored columns of `fields` aliased to their record keys, joining each single link's target for its name. */
function selectFieldsOf(sql: SqlContext, qb: Knex.QueryBuilder, { model, fields }: { model: EntityModel; fields: readonly FieldModel[] }): Knex.QueryBuilder {
  const columns: Record<string, string | Knex.Raw> = {};
  for (const field of fields) {
    if (!field.column) continue;
    columns[field.key] = `${model.table}.${field.column}`;
    if (field.type === 'link') columns[`${field.name}Name`] = joinLinkName(sql, qb, { model, field });
  }
  return qb.select(columns as Record<string, string>).where(`${model.table}.deleted`, sql.dialect.live as never);
}

/**
 * Builds the select of a list or read: stored columns aliased to their record keys, and one
 * left join per single link for its name, so that names cost no extra query.
 */
export function selectRecords(sql: SqlContext, model: EntityModel, fields: readonly FieldModel[]): Knex.QueryBuilder {
  return selectFieldsOf(sql, sql.db(model.table), { model, fields });
}

/**
 * What a page's select holds around the subquery of its rows: the columns of `fields` aliased to
 * their record keys and one left join per single link for its name (as `selectRecords`), the
 * total, the order. It depends on the fields and the order only, and is written as text once per
 * shape, its few constants as literals, so that no request builds or compiles it.
 */
interface PageFrame {
  head: string;
  tail: string;
}

const pageFrames = new WeakMap<EntityModel, ShapeCache<PageFrame>>();

function pageFrame(sql: SqlContext, model: EntityModel, { fields, page }: { fields: readonly FieldModel[]; page: PickedPage }): PageFrame {
  const { order, withTotal } = page;
  let key = `${withTotal ? 'total' : ''}:${order.direction}${order.nulls}:${order.byId ? 'id' : ''}:`;
  for (const f of fields) key += `${f.key},`;
  let frames = pageFrames.get(model);
  if (!frames) pageFrames.set(model, (frames = new ShapeCache(200)));
  return frames.get(key, () => {
    const live = sql.dialect.bool(false);
    const t = q(model.table);
    const columns = withTotal ? [`${q(PAGE.alias)}.${q(PAGE_TOTAL)} as ${q(PAGE_TOTAL)}`] : [];
    const joins: string[] = [];
    for (const field of fields) {
      if (!field.column) continue;
      columns.push(`${t}.${q(field.column)} as ${q(field.key)}`);
      if (field.type !== 'link') continue;
      const target = sql.schema.entity(field.target) as EntityModel;
      const alias = q(linkAlias(field));
      columns.push(`${firstSet(nameColumns(target).map((c) => `nullif(${alias}.${q(c)}, '')`))} as ${q(`${field.name}Name`)}`);
      joins.push(` left join ${q(target.table)} as ${alias} on ${alias}.${q('id')} = ${t}.${q(field.column)} and ${alias}.${q('deleted')} = ${live}`);
    }
    const by = `${order.direction}${order.nulls}`;
    const then = order.byId ? '' : `, ${q(PAGE.alias)}.${q(PAGE.id)} ${order.direction}`;
    return {
      head: `select ${columns.join(', ')} from (`,
      tail:
        `) as ${q(PAGE.alias)} inner join ${t} on ${t}.${q('id')} = ${q(PAGE.alias)}.${q(PAGE.id)}${joins.join('')} ` +
        `where ${t}.${q('deleted')} = ${live} order by ${q(PAGE.alias)}.${q(PAGE.sort)} ${by}${then}`,
    };
  });
}

/**
 * The select of a page in id order of every live record (a list without conditions): the columns
 * of `fields` and the names of single links, `limit` and `offset` bound. It depends on the fields
 * and the direction only: compiled once, run as a prepared statement.
 */
export function bareIdPageStatement(sql: SqlContext, model: EntityModel, { fields, direction }: { fields: readonly FieldModel[]; direction: 'asc' | 'desc' }): PreparedStatement {
  let key = `bareIdPage:${model.table}:${direction}:`;
  for (const f of fields) key += `${f.key},`;
  return sql.statements.get(key, () =>
    prepareStatement('rows', (param) => {
      // knex takes numbers only for limit and offset: they are bound around its text.
      const select = selectRecords(sql, model, fields).orderBy(`${model.table}.id`, direction).toSQL();
      return sql.db.raw(`${select.sql} limit ? offset ?`, [...select.bindings, param('limit'), param('offset')] as Knex.RawBinding[]);
    }),
  );
}

/** The count of every live record (a list without conditions), compiled once. */
export function bareCountStatement(sql: SqlContext, model: EntityModel): PreparedStatement {
  return sql.statements.get(`bareCount:${model.table}`, () =>
    prepareStatement('first', (param) => sql.db(model.table).where(`${model.table}.deleted`, param('live')).count({ total: '*' })),
  );
}

/**
 * The rows `page` picked (pageKeys) with the columns of `fields` and the names of single links
 * (as `selectRecords`), in its order, with its total under PAGE_TOTAL when counted. Only the
 * subquery of the rows is compiled for the request; the select around it is text made once per
 * shape (see `runNative` for how the statement runs).
 */
export function readPageRows(sql: SqlContext, model: EntityModel, { fields, page }: { fields: readonly FieldModel[]; page: PickedPage }): Promise<Record<string, unknown>[]> {
  const frame = pageFrame(sql, model, { fields, page });
  const keys = page.keys.toSQL().toNative();
  return runNative(sql, { method: 'rows', text: `${frame.head}${keys.sql}${frame.tail}` }, keys.bindings);
}

/** The order of a list: its sort value, then id. */
export interface RowOrder {
  /** The value rows are sorted by: a column, a link's name (sortColumn), an attribute's value. */
  by: Knex.Raw | Knex.Ref<string, Record<string, string>>;
  direction: 'asc' | 'desc';
  /** Where NULL goes (` nulls first`), or empty for a value that is never NULL. */
  nulls: string;
  /** The sort value is the id: nothing to add. */
  byId: boolean;
}

/** Orders a query by `order`, then by `id` (the column or reference of the id) unless the order is the id's. */
export function orderRows(qb: Knex.QueryBuilder, order: RowOrder, id: string): void {
  qb.orderByRaw(`? ${order.direction}${order.nulls}`, [order.by]);
  if (!order.byId) qb.orderBy(id, order.direction);
}

/** The rows a page is made of, picked by pageKeys. */
export interface PickedPage {
  keys: Knex.QueryBuilder;
  order: RowOrder;
  withTotal: boolean;
}

/**
 * Picks the rows of a page in a subquery of their ids and sort values that sorts and limits
 * before anything is joined for names (selectPage with the result): a page that is not in id
 * order has to visit every record the list matches, and the joins then cost only the page's
 * rows. `withTotal` counts those records in the same visit (a window count under PAGE_TOTAL),
 * instead of a second statement that would read and test them all again. The caller adds the
 * list's conditions, offset and limit to `keys`.
 */
export function pageKeys(sql: SqlContext, model: EntityModel, { order, sort, withTotal }: { order: RowOrder; sort?: FieldModel; withTotal: boolean }): PickedPage {
  const { db, dialect } = sql;
  const keys = db(model.table).where(`${model.table}.deleted`, dialect.live as never);
  // A link sorts by its target's name (sortColumn), which needs its join.
  if (sort?.type === 'link') joinLinkName(sql, keys, { model, field: sort });
  keys.select({ [PAGE.id]: `${model.table}.id` }, db.raw('? as ??', [order.by, PAGE.sort]));
  if (withTotal) keys.select(db.raw('count(*) over () as ??', [PAGE_TOTAL]));
  orderRows(keys, order, `${model.table}.id`);
  return { keys, order, withTotal };
}

/** The stored columns of `fields`: a link's id without its linked record's name (no join). */
export function selectStoredColumns(sql: SqlContext, model: EntityModel, fields: readonly FieldModel[]): Knex.QueryBuilder {
  const { db, dialect } = sql;
  const columns: Record<string, string> = {};
  for (const field of fields) if (field.column) columns[field.key] = `${model.table}.${field.column}`;
  return db(model.table).select(columns).where(`${model.table}.deleted`, dialect.live as never);
}

/** Field types whose values are text, ordered in code point order on both databases (`Dialect.codePointOrder`). */
const TEXT_TYPES: ReadonlySet<string> = new Set(['varchar', 'text', 'enum']);

/**
 * The expression to order by for a field (a link sorts by its target's name, as `shows` lets
 * it name the record), text in code point order. Not `id`: ids sort along the primary key's
 * index (server-made ids are in the same order in every collation).
 */
export function sortColumn(sql: SqlContext, { model, field, shows }: { model: EntityModel; field: FieldModel; shows?: ShowsField }): Knex.Raw {
  const { db, schema, dialect } = sql;
  if (field.type === 'link') return db.raw(dialect.codePointOrder('?'), [nameSql(db, schema.entity(field.target) as EntityModel, { alias: linkAlias(field), shows })]);
  const column = `${model.table}.${field.column}`;
  return TEXT_TYPES.has(field.type) && field.name !== 'id' ? db.raw(dialect.codePointOrder('??'), [column]) : db.raw('??', [column]);
}

/** The fields whose values the driver does not answer as API values (booleans, JSON on SQLite). */
export function decodedFields(dialect: Dialect, fields: readonly FieldModel[]): FieldModel[] {
  if (dialect.typedReads) return [];
  return fields.filter((f) => f.column && (f.type === 'bool' || f.type === 'multiEnum' || f.type === 'jsonObject'));
}

/** The select of one live record by id (the value `id`), with its version, compiled once. */
export function selectByIdStatement(sql: SqlContext, model: EntityModel, shape: { fields: readonly FieldModel[]; names?: false }): PreparedStatement {
  return prepareStatement('rows', (param) => selectById(sql, model, { ...shape, id: param('id') }));
}

/** Converts driver values of `decoded` fields (see `decodedFields`) to API values in place. */
export function decodeRows(dialect: Dialect, decoded: readonly FieldModel[], rows: Record<string, unknown>[]): void {
  if (decoded.length === 0) return;
  for (const row of rows) for (const f of decoded) row[f.key] = dialect.fromDb(f.type, row[f.key]);
}

/** The select of one live record by id (`id` may be a marker of a prepared statement), with its version. */
export function selectById(sql: SqlContext, model: EntityModel, { fields, names, id }: { fields: readonly FieldModel[]; names?: false; id: string }): Knex.QueryBuilder {
  const select = names === false ? selectStoredColumns(sql, model, fields) : selectRecords(sql, model, fields);
  return withVersion(select, model).where(`${model.table}.id`, id);
}


/** Record keys in output order for the chosen fields. */
export function outputKeys(fields: readonly FieldModel[]): string[] {
  const keys: string[] = [];
  for (const f of fields) {
    if (f.def.writeOnly) continue;
    keys.push(f.key);
    if (f.type === 'link') keys.push(`${f.name}Name`);
    if (f.type === 'linkMultiple') keys.push(`${f.name}Names`);
  }
  return keys;
}

/** Orders a record's keys as the definition does (JSON output is stable and readable). */
export function shapeRecord(keys: readonly string[], row: Record<string, unknown>): ApiRecord {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = row[k] ?? null;
  return out as ApiRecord;
}

/** Restricts a query of a link's target (under `table`) to the records one source record links to through `field`. */
export function linkedRecords(field: LinkField, source: { id: string; record: Record<string, unknown> }, table: string): (qb: Knex.QueryBuilder) => void {
  return (qb) => {
    if (field.linkKind === 'belongsTo') qb.where(`${table}.id`, (source.record[field.key] as string | null) ?? '');
    else if (field.linkKind === 'hasMany') qb.where(`${table}.${field.foreignColumn}`, source.id);
    else {
      const { join } = field;
      qb.whereIn(`${table}.id`, (sub: Knex.QueryBuilder) => void sub.select(join.targetColumn).from(join.table).where(join.ownColumn, source.id));
    }
  };
}

/** The key a row carries the record's version under, read beside its fields. */
export const VERSION_KEY = '__version';

/** Reads the record's version with the row (under `VERSION_KEY`). */
export function withVersion(qb: Knex.QueryBuilder, model: EntityModel): Knex.QueryBuilder {
  return qb.select({ [VERSION_KEY]: `${model.table}.${VERSION_COLUMN}` });
}
