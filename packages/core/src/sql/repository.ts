import type { Knex } from 'knex';
import type { UserAccess } from '../auth/access-control';
import { forbidden } from '../auth/access-control';
import type { RecordAttributes } from '../attributes/record-attributes';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/normalize';
import { compileRecordValidator, isValidId, type RecordValidator } from '../definition/validate-record';
import { ApiError, notFound } from '../errors';
import type { HookRegistry, PresentKind, RecordHookEvent } from '../hooks';
import { hiddenKeys, type PresentLink, type PresentPlan, type Presenter } from '../present';
import { nowDateTime } from '../time';
import { uuidv7 } from '../util/uuid';
import type { Database } from './database';
import { databaseUnavailable, isConnectionError } from './dialects/shared';
import { assertOptionsInList, splitLinkObjects } from './link-resolver';
import { linkObjectResolver, resolveLinkObjects } from './link-objects';
import { restoreRecords } from './restore';
import { assertLinkTargets, currentLinkIds, detachEverywhere, writeMultipleLink } from './link-writes';
import { decodeRows, live, loadMultipleLinks, outputKeys, selectRecords, shapeRecord, sortColumn } from './read-query';
import { equalValues, RecordGuard, sameValue } from './record-guard';
import { uniqueIndexNames } from './schema-sync';
import { applyWhere, type WhereContext } from './where';
import { asNonNegativeInt, invalidQuery } from './where-values';

export interface FindParams {
  select?: readonly string[];
  where?: readonly unknown[];
  offset?: number;
  maxSize?: number;
  sortBy?: string;
  asc?: boolean;
  /** Only count. */
  totalOnly?: boolean;
  /** Only the page, without the count query. */
  collectionOnly?: boolean;
  /** Attributes (ids or codes) whose values the page shows; they may be sorted by. */
  attributes?: readonly string[];
  /** Every attribute each record has (with `Flatten-Attributes: true`). */
  allAttributes?: boolean;
}

export interface FindResult<TRecord = ApiRecord> {
  total?: number;
  list?: TRecord[];
}

export interface RestoreResult {
  restored: number;
  errors: { id: string; code: string; message: string }[];
}

/** What every repository of an instance shares. */
export interface RepositoryEnvironment {
  database: Database;
  schema: SchemaModel;
  hooks: HookRegistry;
  /** Largest `maxSize`; default 1000. */
  maxListSize: number;
  defaultListSize: number;
  /** Resolves a user's rights; a context without user is the system and unrestricted. */
  accessFor: (user: RequestContext['user']) => Promise<UserAccess>;
  /** The repository of another entity type (link targets). */
  repository: (entity: string) => Repository;
  /** Attribute values of records (entity types with `hasAttributes`). */
  attributes?: RecordAttributes;
  /** Plugin hooks and `_meta` categories that shape response pages. */
  presenter: Presenter;
}

/** How a page of records is read: for which response, and (linked records) through which link. */
interface ListOptions {
  kind: PresentKind;
  scope?: LinkScope;
  link?: PresentLink;
  /** `findByIds`: any number of records, whatever `maxListSize` says. */
  unlimited?: boolean;
}

/** Ids per query of `findByIds`. */
const IDS_PER_QUERY = 500;

/** Keys whose value before-hooks put into (or changed in) the body. */
function keysSetByHooks(sent: Record<string, unknown>, input: Record<string, unknown>): ReadonlySet<string> {
  return new Set(Object.keys(input).filter((key) => !Object.is(sent[key], input[key])));
}

/** System columns that are never NULL (the default sort is `id`). */
const NEVER_NULL = new Set(['id', 'createdAt', 'modifiedAt']);

/** Work to run once the transaction that wrote the records has committed (after-hooks). */
export type AfterCommit = (() => Promise<void>)[];

/** Restricts a query of the target entity to the records linked to one source record. */
type LinkScope = (qb: Knex.QueryBuilder) => void;

/**
 * Reads and writes records of one entity type. Methods check permissions, validate input, run
 * hooks and translate database errors; field names reach SQL only through the definition.
 */
export class Repository<TRecord extends ApiRecord = ApiRecord> {
  readonly model: EntityModel;
  /** Validates a create or update body of this entity type. */
  readonly validate: RecordValidator;
  /** @internal Shared by the repositories of an instance. */
  readonly env: RepositoryEnvironment;
  /** @internal Permission checks of this entity type. */
  readonly guard: RecordGuard;
  /** @internal Fields a record shows (all but write-only ones). */
  readonly readable: FieldModel[];
  private readonly uniqueByKey: Map<string, string[]>;

  constructor(env: RepositoryEnvironment, model: EntityModel) {
    this.env = env;
    this.model = model;
    this.validate = compileRecordValidator(model);
    this.guard = new RecordGuard(model, env.accessFor);
    this.readable = model.fields.filter((f) => !f.def.writeOnly);
    this.uniqueByKey = new Map([['id', ['id']]]);
    for (const u of uniqueIndexNames(model)) {
      this.uniqueByKey.set(u.name, u.fields);
      this.uniqueByKey.set(u.columns.join(','), u.fields);
    }
  }

  private get db(): Knex {
    return this.env.database.knex;
  }

  private get dialect() {
    return this.env.database.dialect;
  }

  /** @internal Driver errors become API errors: unique → 409, lost connection → 503. */
  async translated<TResult>(fn: () => Promise<TResult>): Promise<TResult> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof ApiError) throw error;
      const api = this.dialect.translateError(error, { entity: this.model.name, uniqueFields: (key) => this.uniqueByKey.get(key) });
      if (api) throw api;
      if (isConnectionError(error)) throw databaseUnavailable(error);
      throw error;
    }
  }

  /** A field by name or record key; `<link>Name` / `<link>Names` name their link. */
  private fieldByName(name: string): FieldModel | undefined {
    const direct = this.model.byKey.get(name) ?? this.model.field.get(name);
    if (direct) return direct;
    const link = /^(.+?)(Name|Names)$/.exec(name);
    const field = link ? this.model.field.get(link[1]) : undefined;
    if (field?.type === 'link' && link?.[2] === 'Name') return field;
    if (field?.type === 'linkMultiple' && link?.[2] === 'Names') return field;
    return undefined;
  }

  /** Resolves `select` names (`name`, `brand`, `brandId`, `brandName`) to fields; `id` is always in. */
  private selectFields(select: readonly string[] | undefined): FieldModel[] {
    if (!select || select.length === 0) return this.readable;
    const chosen = new Set<FieldModel>([this.model.field.get('id') as FieldModel]);
    for (const name of select) {
      const field = this.fieldByName(name);
      if (!field || field.def.writeOnly) throw invalidQuery(`Unknown field '${name}' in select for ${this.model.name}`, { field: name });
      chosen.add(field);
    }
    return this.readable.filter((f) => chosen.has(f));
  }

  private sortField(sortBy: string | undefined): FieldModel {
    if (sortBy === undefined || sortBy === '') return this.model.field.get('id') as FieldModel;
    const field = this.fieldByName(sortBy);
    if (!field || !field.column || field.def.writeOnly || field.type === 'jsonObject' || field.type === 'multiEnum') {
      throw invalidQuery(`Cannot sort ${this.model.name} by '${sortBy}'`, { field: sortBy });
    }
    return field;
  }

  /** Decodes rows into records of `fields`, plus the keys of `extra` fields (read for the present stage). */
  private async hydrate(db: Knex | Knex.Transaction, fields: FieldModel[], rows: Record<string, unknown>[], extra: readonly FieldModel[] = []): Promise<ApiRecord[]> {
    const all = extra.length ? [...fields, ...extra] : fields;
    decodeRows(this.dialect, all, rows);
    await loadMultipleLinks(db, this.env.schema, this.dialect, all, rows as ApiRecord[]);
    const keys = extra.length ? [...outputKeys(fields), ...hiddenKeys(extra, fields)] : outputKeys(fields);
    return rows.map((row) => shapeRecord(keys, row));
  }

  /** The present stage of a response: what plugins add to (and remove from) its records. */
  private plan(ctx: RequestContext, kind: PresentKind, fields: readonly FieldModel[]): PresentPlan | undefined {
    return this.env.presenter.plan({ ctx, model: this.model, kind, fields });
  }

  /**
   * A page of live records with the total count, shaped by the present stage (plugins; `_meta`
   * with `ctx.withMeta`).
   */
  async find(ctx: RequestContext, params: FindParams = {}): Promise<FindResult<TRecord>> {
    return this.list(ctx, params, { kind: 'list' });
  }

  /**
   * The live records with these ids that the caller may read (with `systemContext()`: all), by
   * id, in as few queries as the ids need (500 per query), whatever `maxListSize` says.
   */
  async findByIds(ctx: RequestContext, ids: Iterable<string>, options: { select?: readonly string[] } = {}): Promise<Map<string, TRecord>> {
    const unique = [...new Set(ids)];
    const found = new Map<string, TRecord>();
    for (let at = 0; at < unique.length; at += IDS_PER_QUERY) {
      const chunk = unique.slice(at, at + IDS_PER_QUERY);
      const where = [{ type: 'in', attribute: 'id', value: chunk }];
      const page = await this.list(ctx, { where, select: options.select, maxSize: chunk.length, collectionOnly: true }, { kind: 'list', unlimited: true });
      for (const record of page.list ?? []) found.set(record.id, record);
    }
    return found;
  }

  /**
   * Whether the caller's roles allow an action on this record (`own`: created by or assigned to
   * the caller). The record needs `createdById` (and `assignedUserId` when the entity has one).
   */
  async permits(ctx: RequestContext, action: 'read' | 'edit' | 'delete', record: ApiRecord): Promise<boolean> {
    const level = (await this.guard.access(ctx)).scope(this.model.name)[action];
    return level === 'all' || (level === 'own' && this.guard.isOwn(ctx, record));
  }

  /** @internal A page for a list, a linked-record response, or `findByIds` (no size limit). */
  async list(ctx: RequestContext, params: FindParams, options: ListOptions): Promise<FindResult<TRecord>> {
    const scopeTo = options.scope;
    const { schema, maxListSize, defaultListSize } = this.env;
    const maxSize = params.maxSize ?? defaultListSize;
    const offset = params.offset ?? 0;
    if (!options.unlimited && maxSize > maxListSize) throw invalidQuery(`maxSize must not exceed ${maxListSize}`);
    asNonNegativeInt(offset, 'offset');
    const { access, scope } = await this.guard.scope(ctx, 'read');
    const fields = this.guard.readable(access, this.selectFields(params.select), !!params.select?.length);
    const attributes = await this.env.attributes?.listQuery(ctx, this.model, params);
    const sort = attributes?.sort ? undefined : this.sortField(params.sortBy);
    if (sort && !this.guard.canRead(access, sort)) throw forbidden(`Not allowed to sort by ${this.model.name}.${sort.name}`);
    const whereCtx: WhereContext = {
      schema,
      dialect: this.dialect,
      model: this.model,
      onField: (field) => {
        if (!this.guard.canRead(access, field)) throw forbidden(`Not allowed to filter by ${this.model.name}.${field.name}`);
      },
      attribute: attributes?.condition,
    };
    const filter = (qb: Knex.QueryBuilder) => {
      attributes?.join(qb);
      applyWhere(qb, params.where ?? [], whereCtx);
      if (scope.read === 'own') this.guard.ownOnly(ctx, qb);
      scopeTo?.(qb);
    };
    return this.translated(async () => {
      const result: FindResult<TRecord> = {};
      if (!params.collectionOnly) {
        const countQuery = this.db(this.model.table).where(`${this.model.table}.deleted`, live(this.dialect) as never);
        filter(countQuery);
        const [{ total }] = await countQuery.count({ total: '*' });
        result.total = Number(total);
      }
      if (!params.totalOnly) {
        if (result.total === 0 || maxSize === 0) {
          result.list = [];
        } else {
          const plan = this.plan(ctx, options.kind, fields);
          const extra = plan?.extra ?? [];
          // A link sorts by its target's name, which needs its join even when not selected.
          const read = [...fields, ...extra];
          const joined = !sort || read.includes(sort) ? read : [...read, sort];
          const qb = selectRecords(this.db, schema, this.dialect, this.model, joined);
          filter(qb);
          const direction = params.asc === false ? 'desc' : 'asc';
          // NULL sorts as the smallest value on both databases.
          // (knex's own nulls option drops the column on SQLite; both databases know NULLS FIRST/LAST.)
          // Columns that are never NULL get no NULLS clause, so PostgreSQL can page along their index.
          const nulls = sort && NEVER_NULL.has(sort.name) ? '' : ` nulls ${direction === 'asc' ? 'first' : 'last'}`;
          const by = sort ? sortColumn(this.db, schema, this.model, sort) : (attributes?.sort as Knex.Raw);
          qb.orderByRaw(`? ${direction}${nulls}`, [by]);
          if (sort?.name !== 'id') qb.orderBy(`${this.model.table}.id`, direction);
          const rows = await qb.offset(offset).limit(maxSize);
          const records = await this.hydrate(this.db, fields, rows, extra);
          await this.env.attributes?.present(ctx, this.model, records, { mode: 'list', query: attributes });
          await plan?.run(records, { access, link: options.link });
          result.list = records as TRecord[];
        }
      }
      return result;
    });
  }

  /** One live record; 404 when it does not exist, is deleted, or is not the user's under `own`. */
  async get(ctx: RequestContext, id: string, options: { select?: readonly string[] } = {}): Promise<TRecord> {
    const { access } = await this.guard.scope(ctx, 'read');
    const fields = this.guard.readable(access, this.selectFields(options.select), !!options.select?.length);
    const plan = this.plan(ctx, 'read', fields);
    const record = await this.visible(ctx, id, fields, plan?.extra);
    await this.env.hooks.run('afterRead', { ctx, model: this.model, id, record });
    await this.env.attributes?.present(ctx, this.model, [record], { mode: 'single' });
    await plan?.run([record], { access });
    return record as TRecord;
  }

  /**
   * The records linked to one record through `link`, with the list parameters (the link's target
   * entity is listed, with the caller's rights on it).
   */
  async findLinked(ctx: RequestContext, id: string, link: string, params: FindParams = {}): Promise<FindResult> {
    const field = this.model.field.get(link);
    if (!field || field.system || (field.type !== 'link' && field.type !== 'linkMultiple')) {
      throw new ApiError('CORE_NOT_FOUND', `${this.model.name} has no link '${link}'`, { details: { entity: this.model.name, link } });
    }
    const source = await this.visible(ctx, id);
    const target = this.env.repository(field.target as string);
    const t = target.model.table;
    const scope: LinkScope = (qb) => {
      if (field.linkKind === 'belongsTo') qb.where(`${t}.id`, (source[field.key] as string | null) ?? '');
      else if (field.linkKind === 'hasMany') qb.where(`${t}.${field.foreignColumn}`, id);
      else {
        const join = field.join as NonNullable<FieldModel['join']>;
        qb.whereIn(`${t}.id`, (sub: Knex.QueryBuilder) => void sub.select(join.targetColumn).from(join.table).where(join.ownColumn, id));
      }
    };
    return target.list(ctx, params, { kind: 'linked', scope, link: { model: this.model, record: source, field } });
  }

  /**
   * @internal Find-or-create searches only what the caller could list: 403 without read rights on
   * this entity type or on a matched field; under `own`, only the caller's records match.
   */
  async matchScope(ctx: RequestContext, match: Iterable<[FieldModel, unknown]>): Promise<LinkScope | undefined> {
    const { access, scope } = await this.guard.scope(ctx, 'read');
    for (const [field] of match) {
      if (!this.guard.canRead(access, field)) throw forbidden(`Not allowed to read ${this.model.name}.${field.name}`);
    }
    return scope.read === 'own' ? (qb) => this.guard.ownOnly(ctx, qb) : undefined;
  }

  /**
   * @internal A record the caller may see, else 404 (no existence oracle for `own`); 403 without
   * read rights. `present` fields (for the present stage) stay in the record.
   */
  async visible(ctx: RequestContext, id: string, fields = this.readable, present: readonly FieldModel[] = []): Promise<ApiRecord> {
    const { scope } = await this.guard.scope(ctx, 'read');
    // Ownership is judged on createdBy / assignedUser even when the caller selected neither.
    const owners = scope.read === 'own' ? this.readable.filter((f) => f.name === 'createdBy' || f.name === 'assignedUser') : [];
    const extra = [...present, ...owners.filter((f) => !fields.includes(f) && !present.includes(f))];
    const record = await this.findById(this.db, id, fields, extra);
    if (!record || (scope.read === 'own' && !this.guard.isOwn(ctx, record))) throw notFound(this.model.name, id);
    if (extra.length > present.length) {
      const keep = new Set([...outputKeys(fields), ...hiddenKeys(present, fields)]);
      for (const key of Object.keys(record)) if (!keep.has(key)) delete record[key];
    }
    return record;
  }

  private async findById(db: Knex | Knex.Transaction, id: string, fields = this.readable, extra: readonly FieldModel[] = []): Promise<ApiRecord | undefined> {
    if (!isValidId(id)) return undefined;
    return this.translated(async () => {
      const rows = await selectRecords(db, this.env.schema, this.dialect, this.model, [...fields, ...extra]).where(`${this.model.table}.id`, id);
      if (rows.length === 0) return undefined;
      return (await this.hydrate(db, fields, rows, extra))[0];
    });
  }

  /**
   * The answer of a create or an update: the record as stored, without fields the caller may not
   * read, shaped by the present stage. After-hooks get their own copy with every readable field
   * (never a write-only one, nor what the present stage reads), whatever the request asks.
   */
  private async answer(ctx: RequestContext, kind: 'create' | 'update', id: string, afterHook: (record: ApiRecord) => Promise<void>): Promise<TRecord> {
    const access = await this.guard.access(ctx);
    const shown = this.readable.filter((f) => this.guard.canRead(access, f));
    const plan = this.plan(ctx, kind, shown);
    const extra = plan?.extra.filter((f) => !this.readable.includes(f)) ?? [];
    const record = (await this.findById(this.db, id, this.readable, extra)) as ApiRecord;
    await afterHook(shapeRecord(outputKeys(this.readable), record));
    // Fields read for the present stage stay until it has run.
    const presented = await this.guard.present(ctx, record, plan ? this.readable.filter((f) => !plan.extra.includes(f)) : this.readable);
    await this.env.attributes?.present(ctx, this.model, [presented], { mode: 'single' });
    await plan?.run([presented], { access });
    return presented as TRecord;
  }

  /** @internal The columns every change sets: when, by whom, and in a delegated session through whom. */
  modifiedBy(ctx: RequestContext): Record<string, unknown> {
    return { modified_at: nowDateTime(), modified_by_id: ctx.user?.id ?? null, modified_by_actor_id: ctx.actor?.id ?? null };
  }

  /** @internal Splits validated values into stored columns and multiple links. */
  toRow(values: Map<FieldModel, unknown>): { row: Record<string, unknown>; links: [FieldModel, string[]][] } {
    const row: Record<string, unknown> = {};
    const links: [FieldModel, string[]][] = [];
    for (const [field, value] of values) {
      if (field.type === 'linkMultiple') links.push([field, [...new Set(value as string[])]]);
      else row[field.column as string] = this.dialect.toDb(field.type, value);
    }
    return { row, links };
  }

  /**
   * @internal Read-only fields may be sent back unchanged, never changed, except those a
   * before-hook set (`fromHooks`): a plugin fills in values it computed (a file's hash).
   */
  assertWritable(values: Map<FieldModel, unknown>, existing: ApiRecord | undefined, fromHooks?: ReadonlySet<string>): void {
    for (const [field, value] of values) {
      if (!field.def.readOnly || fromHooks?.has(field.key)) continue;
      if (existing && sameValue(field, existing[field.key], value)) {
        values.delete(field);
        continue;
      }
      if (!existing && equalValues(field, field.def.default, value)) continue;
      throw new ApiError('CORE_READ_ONLY_FIELD', `${field.key} is read-only`, {
        details: { issues: [{ path: [field.key], code: 'read_only', message: `${field.key} is read-only` }] },
      });
    }
  }

  /** Creates a record; the body may carry an `id` of 1 to 64 characters `[A-Za-z0-9_-]`. */
  async create(ctx: RequestContext, body: Record<string, unknown>): Promise<TRecord> {
    // Rights and before-hooks may read the database: settle them before the transaction holds
    // a connection (SQLite has one).
    await this.guard.scope(ctx, 'create');
    const attributes = await this.env.attributes?.prepareWrite(ctx, this.model, body);
    const input = { ...(attributes?.body ?? body) };
    const sent = { ...input };
    await this.env.hooks.run('beforeCreate', { ctx, model: this.model, data: input });
    const fromHooks = keysSetByHooks(sent, input);
    const after: AfterCommit = [];
    const id = await this.translated(() =>
      this.db.transaction(async (trx) => {
        const created = await this.insertWithin(trx, ctx, input, after, fromHooks);
        await attributes?.apply(trx, created, linkObjectResolver(this, ctx, after));
        return created;
      }),
    );
    for (const fn of after) await fn();
    return this.answer(ctx, 'create', id, (record) => this.env.hooks.run('afterCreate', { ctx, model: this.model, id, record }));
  }

  /**
   * The create inside a transaction the caller owns (also find-or-create of linked records,
   * whose before-hooks run inside that transaction).
   */
  /** @internal */
  async insertWithin(
    trx: Knex.Transaction,
    ctx: RequestContext,
    body: Record<string, unknown>,
    after: AfterCommit,
    /** Set when create() already ran the before-hooks: the keys they set. */
    hooked?: ReadonlySet<string>,
  ): Promise<string> {
    const { access } = await this.guard.scope(ctx, 'create');
    const input = { ...body };
    if (!hooked) await this.env.hooks.run('beforeCreate', { ctx, model: this.model, data: input });
    const fromHooks = hooked ?? keysSetByHooks(body, input);
    const id = input.id === undefined || input.id === null || input.id === '' ? uuidv7() : input.id;
    if (!isValidId(id)) {
      throw new ApiError('CORE_INVALID_ID', 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -', { details: { id } });
    }
    const { data, objects } = splitLinkObjects(this.model, input);
    const values = this.validate(data, 'create');
    this.assertWritable(values, undefined, fromHooks);
    const sent = new Set([...Object.keys(data), ...[...objects.keys()].map((f) => f.key)]);
    this.guard.assertEditable(access, new Map([...values].filter(([f]) => sent.has(f.key))), undefined);
    for (const field of objects.keys()) this.guard.assertEditable(access, new Map([[field, null]]), undefined);
    await resolveLinkObjects(this, { trx, ctx, after }, objects, values);
    const { row, links } = this.toRow(values);
    const now = nowDateTime();
    const [userId, actorId] = [ctx.user?.id ?? null, ctx.actor?.id ?? null];
    Object.assign(row, { id, created_at: now, created_by_id: userId, created_by_actor_id: actorId, ...this.modifiedBy(ctx), modified_at: now });
    await assertLinkTargets(trx, this.env.schema, this.dialect, values);
    await assertOptionsInList(trx, this.env.schema, this.dialect, values);
    await this.translated(() => trx(this.model.table).insert(row));
    for (const [field, ids] of links) await writeMultipleLink(trx, this.env.schema, field, id, ids, []);
    // Records made by find-or-create get their after-hook once the transaction commits (the main
    // record's is run by create(), with the record it returns).
    if (!hooked && this.env.hooks.has('afterCreate', this.model.name)) {
      after.push(async () => {
        const record = (await this.findById(this.db, id)) as ApiRecord;
        await this.env.hooks.run('afterCreate', { ctx, model: this.model, id, record });
      });
    }
    return id;
  }

  /** Changes the fields present in the body; an update that changes nothing writes nothing. */
  async update(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<TRecord> {
    return (await this.updateRecord(ctx, id, body)).record;
  }

  /** @internal `update`, telling also whether it wrote anything (upsert's `Updated` or `NotModified`). */
  async updateRecord(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<{ record: TRecord; written: boolean }> {
    const { existing, access } = await this.editable(ctx, id);
    const attributes = await this.env.attributes?.prepareWrite(ctx, this.model, body);
    const input = { ...(attributes?.body ?? body) };
    if (input.id !== undefined && input.id !== id) {
      throw new ApiError('CORE_READ_ONLY_FIELD', 'id cannot be changed', {
        details: { issues: [{ path: ['id'], code: 'read_only', message: 'id cannot be changed' }] },
      });
    }
    delete input.id;
    const sent = { ...input };
    const event: RecordHookEvent = { ctx, model: this.model, id, data: input, existing };
    await this.env.hooks.run('beforeUpdate', event);
    const expected = this.expectedColumns(event.expect);
    const { data, objects } = splitLinkObjects(this.model, input);
    const values = this.validate(data, 'update');
    this.assertWritable(values, existing, keysSetByHooks(sent, input));
    for (const field of objects.keys()) this.guard.assertEditable(access, new Map([[field, null]]), undefined);
    const after: AfterCommit = [];
    let written = false;
    await this.translated(() =>
      this.db.transaction(async (trx) => {
        await resolveLinkObjects(this, { trx, ctx, after }, objects, values);
        this.guard.assertEditable(access, values, existing);
        const changed = new Map([...values].filter(([field, value]) => !sameValue(field, existing[field.key], value)));
        const attributesChanged = (await attributes?.apply(trx, id, linkObjectResolver(this, ctx, after))) ?? false;
        if (changed.size === 0 && !attributesChanged) return;
        const { row, links } = this.toRow(changed);
        Object.assign(row, this.modifiedBy(ctx));
        await assertLinkTargets(trx, this.env.schema, this.dialect, changed);
        await assertOptionsInList(trx, this.env.schema, this.dialect, changed);
        const count = await trx(this.model.table).update(row).where({ ...expected, id, deleted: live(this.dialect) });
        if (count === 0) {
          const stillThere = Object.keys(expected).length > 0 && (await trx(this.model.table).first('id').where({ id, deleted: live(this.dialect) }));
          if (stillThere) throw new ApiError('CORE_CONFLICT', `${this.model.name} '${id}' was changed by another request; read it again`, { details: { entity: this.model.name, id } });
          throw notFound(this.model.name, id);
        }
        for (const [field, ids] of links) {
          const previous = await currentLinkIds(trx, this.env.schema, this.dialect, field, id);
          await writeMultipleLink(trx, this.env.schema, field, id, ids, previous);
        }
        written = true;
      }),
    );
    for (const fn of after) await fn();
    const record = await this.answer(ctx, 'update', id, (stored) => this.env.hooks.run('afterUpdate', { ctx, model: this.model, id, record: stored, existing }));
    return { record, written };
  }

  /** @internal A record the caller may edit: visible (404) and within the edit right (403). */
  async editable(ctx: RequestContext, id: string): Promise<{ existing: ApiRecord; access: UserAccess }> {
    const existing = await this.visible(ctx, id);
    const { access, scope } = await this.guard.scope(ctx, 'edit');
    this.guard.assertLevel(ctx, scope.edit, existing, 'edit');
    return { existing, access };
  }

  /** The column conditions of a hook's `expect` (record keys of stored fields only). */
  private expectedColumns(expect: Record<string, unknown> | undefined): Record<string, unknown> {
    const columns: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(expect ?? {})) {
      const field = this.model.byKey.get(key);
      if (!field?.column) throw new ApiError('CORE_INTERNAL', `expect names '${key}', which is not a stored field of ${this.model.name}`);
      columns[field.column] = this.dialect.toDb(field.type, value);
    }
    return columns;
  }

  /** Soft-deletes (the row stays, invisible, and frees its unique values) or removes the row. */
  async delete(ctx: RequestContext, id: string, options: { permanently?: boolean } = {}): Promise<void> {
    const existing = await this.visible(ctx, id);
    const { scope } = await this.guard.scope(ctx, 'delete');
    this.guard.assertLevel(ctx, scope.delete, existing, 'delete');
    await this.env.hooks.run('beforeDelete', { ctx, model: this.model, id, existing });
    await this.translated(() =>
      this.db.transaction(async (trx) => {
        if (options.permanently) {
          await detachEverywhere(trx, this.env.schema, this.model, id);
          await this.env.attributes?.onPermanentDelete(trx, this.model, id);
          await trx(this.model.table).delete().where({ id });
        } else {
          await trx(this.model.table)
            .update({ deleted: this.dialect.toDb('bool', true), ...this.modifiedBy(ctx) })
            .where({ id, deleted: live(this.dialect) });
        }
      }),
    );
    await this.env.hooks.run('afterDelete', { ctx, model: this.model, id, existing });
  }

  /** Brings soft-deleted records back; one that would collide with a live unique value is an error. */
  async restore(ctx: RequestContext, ids: readonly string[]): Promise<RestoreResult> {
    return restoreRecords(this, ctx, ids);
  }
}
