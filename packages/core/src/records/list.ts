import type { UserAccess } from '../auth/access-control';
import { forbidden } from '../auth/access-control';
import type { AttributeListQuery } from '../attributes/record-attributes';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { PresentKind } from '../hooks';
import type { PresentLink } from '../present';
import { selectFields, sortField } from './field-selection';
import type { QueryBuilder, SqlExpression } from '../sql/database';
import { bareCountStatement, bareIdPageStatement, linkedRecords, orderRows, pageKeys, PAGE_TOTAL, readPageRows, selectRecords, sortColumn, type RowOrder } from '../sql/read-query';
import { runPrepared } from '../sql/prepared';
import { countRows } from '../sql/record-store';
import { linkNamed } from './link-delta';
import type { LinkScopes } from '../sql/link-rows';
import { linkScopes } from './link-scopes';
import { hydrate, visibleRecord } from './read';
import { nameLinksFor } from './link-names';
import type { Repository } from './repository';
import { rowFilter, type RowFilter } from './row-rules';
import type { FieldModel } from '../definition/normalize';
import type { FindParams, FindResult, LinkScope, ListOptions, RepositoryEnvironment } from './repository-types';
import { applyWhere, type WhereContext } from '../sql/where';
import { asNonNegativeInt, invalidQuery } from '../sql/where-values';

/** Ids per query of `findByIds`. */
const IDS_PER_QUERY = 500;

/** System columns that are never NULL (the default sort is `id`). */
const NEVER_NULL = new Set(['id', 'createdAt', 'modifiedAt']);

/** A list request: its parameters and how its page is read. */
interface ListRequest extends ListOptions {
  params: FindParams;
}

/** Applies the conditions of a list to a query: attribute joins, `where`, `own` scope, row rules, link scope. */
type ListFilter = (qb: QueryBuilder) => void;

/** What reading one page needs, once the request is checked. */
interface PageRead {
  /** The list has no conditions at all (no where, own scope, row rule, link scope or attribute): its statements are compiled once. */
  bare?: boolean;
  kind: PresentKind;
  link?: PresentLink;
  access: UserAccess;
  fields: FieldModel[];
  attributes?: AttributeListQuery;
  sort?: FieldModel;
  asc?: boolean;
  filter: ListFilter;
  offset: number;
  maxSize: number;
  /** Count all records the list matches in the page's statement (countsWithPage). */
  withTotal?: boolean;
}

/** The page size and offset of a list; 400 when they are out of range. */
function pageBounds(env: RepositoryEnvironment, params: FindParams, unlimited?: boolean): { maxSize: number; offset: number } {
  const maxSize = params.maxSize ?? env.defaultListSize;
  const offset = params.offset ?? 0;
  if (!unlimited && maxSize > env.maxListSize) throw invalidQuery(`maxSize must not exceed ${env.maxListSize}`);
  asNonNegativeInt(offset, 'offset');
  return { maxSize, offset };
}

/** The conditions of a list; a filter on a field the caller may not read is a 403. */
function listFilter(
  repo: Repository,
  ctx: RequestContext,
  list: { access: UserAccess; own: boolean; rows?: RowFilter; where: readonly unknown[]; attributes?: AttributeListQuery; scopeTo?: LinkScope; partial?: LinkScopes },
): ListFilter {
  const { access, attributes } = list;
  const whereCtx: WhereContext = {
    schema: repo.env.schema,
    dialect: repo.env.database.dialect,
    model: repo.model,
    onField: (field) => {
      // A one-to-many list the caller sees only part of (`linkScopes`): a filter on it would find the rest.
      if (!repo.guard.canRead(access, field) || list.partial?.has(field)) throw forbidden(`Not allowed to filter by ${repo.model.name}.${field.name}`);
    },
    attribute: attributes?.condition,
  };
  return (qb) => {
    attributes?.join(qb);
    applyWhere(qb, list.where, whereCtx);
    if (list.own) repo.guard.ownOnly(ctx, qb);
    list.rows?.(qb);
    list.scopeTo?.(qb);
  };
}

/** How a page is ordered: by its sort field (or attribute), then by id. */
function pageOrder(repo: Repository, { reader, sort, attributes, asc }: Pick<PageRead, 'sort' | 'attributes' | 'asc'> & { reader: UserAccess }): RowOrder {
  const direction = asc === false ? 'desc' : 'asc';
  // NULL sorts as the smallest value on both databases.
  // (knex's own nulls option drops the column on SQLite; both databases know NULLS FIRST/LAST.)
  // Columns that are never NULL get no NULLS clause, so PostgreSQL can page along their index.
  const nulls = sort && NEVER_NULL.has(sort.name) ? '' : ` nulls ${direction === 'asc' ? 'first' : 'last'}`;
  // A link sorts by its records' names as the caller sees them (see `nameLinksFor`).
  const shows = reader.unrestricted ? undefined : (entity: string, field: string) => reader.readsThroughLink(entity, field);
  const by = sort ? sortColumn(repo.sql, { model: repo.model, field: sort, shows }) : (attributes?.sort as SqlExpression);
  return { by, direction, nulls, byId: sort?.name === 'id' };
}

/**
 * The records of one page, shaped by the present stage, and with `withTotal` the number of all
 * records the list matches, counted by the same statement (undefined when the page is empty).
 */
async function readPage(repo: Repository, ctx: RequestContext, page: PageRead): Promise<{ records: ApiRecord[]; total?: number }> {
  const { fields, sort, withTotal = false } = page;
  const plan = repo.env.presenter.plan({ ctx, model: repo.model, kind: page.kind, fields });
  const extra = plan?.extra ?? [];
  const read = [...fields, ...extra];
  // Who the names of linked records are shown to: the caller, or the one a read is made for.
  const reader = ctx.shownTo ?? page.access;
  const order = pageOrder(repo, { ...page, reader });
  let rows: Record<string, unknown>[];
  if (order.byId && !withTotal && page.bare) {
    const statement = bareIdPageStatement(repo.sql, repo.model, { fields: read, direction: order.direction });
    rows = await runPrepared(repo.sql, statement, { limit: page.maxSize, offset: page.offset });
  } else if (order.byId && !withTotal) {
    // The primary key gives the rows in order: the database stops after the page, joins and all.
    const qb = selectRecords(repo.sql, repo.model, read);
    page.filter(qb);
    orderRows(qb, order, `${repo.model.table}.id`);
    rows = (await qb.offset(page.offset).limit(page.maxSize)) as Record<string, unknown>[];
  } else {
    const picked = pageKeys(repo.sql, repo.model, { order, sort, withTotal });
    page.filter(picked.keys);
    picked.keys.offset(page.offset).limit(page.maxSize);
    rows = await readPageRows(repo.sql, repo.model, { fields: read, page: picked });
  }
  const total = withTotal && rows.length > 0 ? Number(rows[0][PAGE_TOTAL]) : undefined;
  const records = await hydrate(repo, rows, { fields, extra, scopes: await linkScopes(repo, ctx, fields) });
  await nameLinksFor(repo, reader, records);
  await repo.env.attributes?.present(ctx, { model: repo.model, records }, { mode: 'list', query: page.attributes });
  await plan?.run(records, { access: page.access, link: page.link });
  return { records, total };
}

/**
 * Whether the page's statement also counts the list: when the page is not in id order it visits
 * every record the conditions keep, as the count does, and a second visit would test them all
 * again. Without conditions, a count costs little, and a page in id order stops early.
 */
function countsWithPage(page: PageRead, conditions: boolean): boolean {
  return conditions && page.sort?.name !== 'id';
}

/** A page for a list, a linked-record response, or `findByIds` (no size limit). */
export async function listRecords<TRecord extends ApiRecord>(repo: Repository<TRecord>, ctx: RequestContext, request: ListRequest): Promise<FindResult<TRecord>> {
  const { params } = request;
  const { maxSize, offset } = pageBounds(repo.env, params, request.unlimited);
  const { access, scope } = await repo.guard.scope(ctx, 'read');
  const fields = repo.guard.readable(access, selectFields(repo, params.select), !!params.select?.length);
  const attributes = await repo.env.attributes?.listQuery(ctx, repo.model, params);
  const sort = attributes?.sort ? undefined : sortField(repo.model, params.sortBy);
  if (sort && !repo.guard.canRead(access, sort)) throw forbidden(`Not allowed to sort by ${repo.model.name}.${sort.name}`);
  const rows = await rowFilter(repo, ctx);
  const partial = params.where?.length ? await linkScopes(repo, ctx, repo.model.fields) : undefined;
  const filter = listFilter(repo, ctx, { access, own: scope.read === 'own', rows, where: params.where ?? [], attributes, scopeTo: request.scope, partial });
  const conditions = (params.where?.length ?? 0) > 0 || scope.read === 'own' || request.scope !== undefined || rows !== undefined;
  const bare = !conditions && attributes === undefined;
  const page: PageRead = { kind: request.kind, link: request.link, access, fields, attributes, sort, asc: params.asc, filter, offset, maxSize, bare };
  const count = () => (bare ? countAll(repo) : countRows(repo.sql, repo.model, filter));
  return repo.translated(async () => {
    if (!params.collectionOnly && !params.totalOnly && maxSize > 0 && countsWithPage(page, conditions)) {
      const { records, total } = await readPage(repo, ctx, { ...page, withTotal: true });
      // An empty page past the first says nothing of the others.
      const counted = total ?? (offset === 0 ? 0 : await count());
      return { total: counted, list: records as TRecord[] };
    }
    const result: FindResult<TRecord> = {};
    if (!params.collectionOnly) result.total = await count();
    if (!params.totalOnly) result.list = result.total === 0 || maxSize === 0 ? [] : ((await readPage(repo, ctx, page)).records as TRecord[]);
    return result;
  });
}

/** The number of every live record of the type, by a statement compiled once. */
async function countAll(repo: Repository): Promise<number> {
  const row = await runPrepared<{ total: unknown } | undefined>(repo.sql, bareCountStatement(repo.sql, repo.model), { live: repo.env.database.dialect.live });
  return Number(row?.total ?? 0);
}

/**
 * The live records with these ids that the caller may read (with `systemContext()`: all), by
 * id, in as few queries as the ids need (500 per query), whatever `maxListSize` says.
 */
export async function findRecordsByIds<TRecord extends ApiRecord>(
  repo: Repository<TRecord>,
  ctx: RequestContext,
  { ids, select }: { ids: Iterable<string>; select?: readonly string[] },
): Promise<Map<string, TRecord>> {
  const unique = [...new Set(ids)];
  const found = new Map<string, TRecord>();
  for (let at = 0; at < unique.length; at += IDS_PER_QUERY) {
    const chunk = unique.slice(at, at + IDS_PER_QUERY);
    const where = [{ type: 'in', attribute: 'id', value: chunk }];
    const params = { where, select, maxSize: chunk.length, collectionOnly: true };
    const page = await listRecords(repo, ctx, { params, kind: 'list', unlimited: true });
    for (const record of page.list ?? []) found.set(record.id, record);
  }
  return found;
}

/**
 * The records linked to one record through `link`, with the list parameters (the link's target
 * entity is listed, with the caller's rights on it).
 */
export async function findLinkedRecords(repo: Repository, ctx: RequestContext, { id, link, params }: { id: string; link: string; params: FindParams }): Promise<FindResult> {
  const field = linkNamed(repo.model, link, { reading: true });
  // The linked records show the link's value: 403 when the caller may not read the field.
  const { access } = await repo.guard.scope(ctx, 'read');
  if (!repo.guard.canRead(access, field)) throw forbidden(`Not allowed to read ${repo.model.name}.${field.name}`);
  const source = await visibleRecord(repo, ctx, { id });
  const target = repo.env.repository(field.target);
  const scope = linkedRecords(field, { id, record: source }, target.model.table);
  return target.list(ctx, params, { kind: 'linked', scope, link: { model: repo.model, record: source, field } });
}
