import type { Knex } from 'knex';
import type { UserAccess } from '../auth/access-control';
import { forbidden } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/normalize';
import { compileRecordValidator, isValidId, type RecordValidator } from '../definition/validate-record';
import { ApiError, notFound } from '../errors';
import type { HookRegistry } from '../hooks';
import { nowDateTime } from '../time';
import { uuidv7 } from '../util/uuid';
import type { Database } from './database';
import { databaseUnavailable, isConnectionError } from './dialects/shared';
import { assertOptionsInList, findMatching, matchFields, optionListId, severalMatches, splitLinkObjects, type LinkObjects } from './link-resolver';
import { assertLinkTargets, currentLinkIds, detachEverywhere, writeMultipleLink } from './link-writes';
import { decodeRows, live, loadMultipleLinks, outputKeys, selectRecords, shapeRecord, sortColumn } from './read-query';
import { RecordGuard, sameValue } from './record-guard';
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
}

/** Keys whose value before-hooks put into (or changed in) the body. */
function keysSetByHooks(sent: Record<string, unknown>, input: Record<string, unknown>): ReadonlySet<string> {
  return new Set(Object.keys(input).filter((key) => !Object.is(sent[key], input[key])));
}

/** System columns that are never NULL (the default sort is `id`). */
const NEVER_NULL = new Set(['id', 'createdAt', 'modifiedAt']);

/** Work to run once the transaction that wrote the records has committed (after-hooks). */
type AfterCommit = (() => Promise<void>)[];

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
  async translated<T>(fn: () => Promise<T>): Promise<T> {
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

  private async hydrate(db: Knex | Knex.Transaction, fields: FieldModel[], rows: Record<string, unknown>[]): Promise<ApiRecord[]> {
    decodeRows(this.dialect, fields, rows);
    await loadMultipleLinks(db, this.env.schema, this.dialect, fields, rows as ApiRecord[]);
    const keys = outputKeys(fields);
    return rows.map((row) => shapeRecord(keys, row));
  }

  /** A page of live records with the total count. */
  async find(ctx: RequestContext, params: FindParams = {}, scopeTo?: LinkScope): Promise<FindResult<TRecord>> {
    const { schema, maxListSize, defaultListSize } = this.env;
    const maxSize = params.maxSize ?? defaultListSize;
    const offset = params.offset ?? 0;
    if (maxSize > maxListSize) throw invalidQuery(`maxSize must not exceed ${maxListSize}`);
    asNonNegativeInt(offset, 'offset');
    const { access, scope } = await this.guard.scope(ctx, 'read');
    const fields = this.guard.readable(access, this.selectFields(params.select), !!params.select?.length);
    const sort = this.sortField(params.sortBy);
    if (!this.guard.canRead(access, sort)) throw forbidden(`Not allowed to sort by ${this.model.name}.${sort.name}`);
    const whereCtx: WhereContext = {
      schema,
      dialect: this.dialect,
      model: this.model,
      onField: (field) => {
        if (!this.guard.canRead(access, field)) throw forbidden(`Not allowed to filter by ${this.model.name}.${field.name}`);
      },
    };
    const filter = (qb: Knex.QueryBuilder) => {
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
          // A link sorts by its target's name, which needs its join even when not selected.
          const joined = fields.includes(sort) ? fields : [...fields, sort];
          const qb = selectRecords(this.db, schema, this.dialect, this.model, joined);
          filter(qb);
          const direction = params.asc === false ? 'desc' : 'asc';
          // NULL sorts as the smallest value on both databases.
          // (knex's own nulls option drops the column on SQLite; both databases know NULLS FIRST/LAST.)
          // Columns that are never NULL get no NULLS clause, so PostgreSQL can page along their index.
          const nulls = NEVER_NULL.has(sort.name) ? '' : ` nulls ${direction === 'asc' ? 'first' : 'last'}`;
          qb.orderByRaw(`? ${direction}${nulls}`, [sortColumn(this.db, schema, this.model, sort)]);
          if (sort.name !== 'id') qb.orderBy(`${this.model.table}.id`, direction);
          const rows = await qb.offset(offset).limit(maxSize);
          result.list = (await this.hydrate(this.db, fields, rows)) as TRecord[];
        }
      }
      return result;
    });
  }

  /** One live record; 404 when it does not exist, is deleted, or is not the user's under `own`. */
  async get(ctx: RequestContext, id: string, options: { select?: readonly string[] } = {}): Promise<TRecord> {
    const { access } = await this.guard.scope(ctx, 'read');
    const fields = this.guard.readable(access, this.selectFields(options.select), !!options.select?.length);
    const record = await this.visible(ctx, id, fields);
    await this.env.hooks.run('afterRead', { ctx, model: this.model, id, record });
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
    return target.find(ctx, params, scope);
  }

  /** A record the caller may see, else 404 (no existence oracle for `own`); 403 without read rights. */
  private async visible(ctx: RequestContext, id: string, fields = this.readable): Promise<ApiRecord> {
    const { scope } = await this.guard.scope(ctx, 'read');
    // Ownership is judged on createdBy / assignedUser even when the caller selected neither.
    const owners = scope.read === 'own' ? this.readable.filter((f) => f.name === 'createdBy' || f.name === 'assignedUser') : [];
    const extra = owners.filter((f) => !fields.includes(f));
    const record = await this.findById(this.db, id, extra.length ? [...fields, ...extra] : fields);
    if (!record || (scope.read === 'own' && !this.guard.isOwn(ctx, record))) throw notFound(this.model.name, id);
    if (extra.length) {
      const keep = new Set(outputKeys(fields));
      for (const key of Object.keys(record)) if (!keep.has(key)) delete record[key];
    }
    return record;
  }

  private async findById(db: Knex | Knex.Transaction, id: string, fields = this.readable): Promise<ApiRecord | undefined> {
    if (!isValidId(id)) return undefined;
    return this.translated(async () => {
      const rows = await selectRecords(db, this.env.schema, this.dialect, this.model, fields).where(`${this.model.table}.id`, id);
      if (rows.length === 0) return undefined;
      return (await this.hydrate(db, fields, rows))[0];
    });
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
      if (!existing && sameValue(field, field.def.default, value)) continue;
      throw new ApiError('CORE_READ_ONLY_FIELD', `${field.key} is read-only`, {
        details: { issues: [{ path: [field.key], code: 'read_only', message: `${field.key} is read-only` }] },
      });
    }
  }

  /**
   * Finds or creates the records named by link objects, inside the caller's transaction, and
   * puts their ids into `values`. Several matches for one object are a 409.
   */
  private async resolveLinkObjects(trx: Knex.Transaction, ctx: RequestContext, objects: LinkObjects, values: Map<FieldModel, unknown>, after: AfterCommit) {
    for (const [field, items] of objects) {
      const target = this.env.repository(field.target as string);
      const listId = await optionListId(trx, this.env.schema, this.dialect, field);
      const ids: string[] = [];
      for (const item of items) {
        if (typeof item === 'string') {
          ids.push(item);
          continue;
        }
        const object = item as Record<string, unknown>;
        matchFields(field, target.model, object);
        const match = [...target.validate(object, 'update')];
        const found = await findMatching(trx, this.dialect, target.model, match, listId);
        if (found.length > 1) throw severalMatches(field, target.model);
        ids.push(found[0] ?? (await target.insertWithin(trx, ctx, listId ? { ...object, extensibleEnumId: listId } : object, after)));
      }
      values.set(field, field.type === 'link' ? ids[0] : [...new Set([...((values.get(field) as string[]) ?? []), ...ids])]);
    }
  }

  /** Creates a record; the body may carry an `id` of 1 to 64 characters `[A-Za-z0-9_-]`. */
  async create(ctx: RequestContext, body: Record<string, unknown>): Promise<TRecord> {
    // Rights and before-hooks may read the database: settle them before the transaction holds
    // a connection (SQLite has one).
    await this.guard.scope(ctx, 'create');
    const input = { ...body };
    await this.env.hooks.run('beforeCreate', { ctx, model: this.model, data: input });
    const fromHooks = keysSetByHooks(body, input);
    const after: AfterCommit = [];
    const id = await this.translated(() => this.db.transaction((trx) => this.insertWithin(trx, ctx, input, after, fromHooks)));
    for (const fn of after) await fn();
    const record = (await this.findById(this.db, id)) as ApiRecord;
    await this.env.hooks.run('afterCreate', { ctx, model: this.model, id, record });
    return (await this.guard.present(ctx, record, this.readable)) as TRecord;
  }

  /**
   * The create inside a transaction the caller owns (also find-or-create of linked records,
   * whose before-hooks run inside that transaction).
   */
  private async insertWithin(
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
    await this.resolveLinkObjects(trx, ctx, objects, values, after);
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
    const existing = await this.visible(ctx, id);
    const { access, scope } = await this.guard.scope(ctx, 'edit');
    this.guard.assertLevel(ctx, scope.edit, existing, 'edit');
    const input = { ...body };
    if (input.id !== undefined && input.id !== id) {
      throw new ApiError('CORE_READ_ONLY_FIELD', 'id cannot be changed', {
        details: { issues: [{ path: ['id'], code: 'read_only', message: 'id cannot be changed' }] },
      });
    }
    delete input.id;
    const sent = { ...input };
    await this.env.hooks.run('beforeUpdate', { ctx, model: this.model, id, data: input, existing });
    const { data, objects } = splitLinkObjects(this.model, input);
    const values = this.validate(data, 'update');
    this.assertWritable(values, existing, keysSetByHooks(sent, input));
    for (const field of objects.keys()) this.guard.assertEditable(access, new Map([[field, null]]), undefined);
    const after: AfterCommit = [];
    await this.translated(() =>
      this.db.transaction(async (trx) => {
        await this.resolveLinkObjects(trx, ctx, objects, values, after);
        this.guard.assertEditable(access, values, existing);
        const changed = new Map([...values].filter(([field, value]) => !sameValue(field, existing[field.key], value)));
        if (changed.size === 0) return;
        const { row, links } = this.toRow(changed);
        Object.assign(row, this.modifiedBy(ctx));
        await assertLinkTargets(trx, this.env.schema, this.dialect, changed);
        await assertOptionsInList(trx, this.env.schema, this.dialect, changed);
        const count = await trx(this.model.table).update(row).where({ id, deleted: live(this.dialect) });
        if (count === 0) throw notFound(this.model.name, id);
        for (const [field, ids] of links) {
          const previous = await currentLinkIds(trx, this.env.schema, this.dialect, field, id);
          await writeMultipleLink(trx, this.env.schema, field, id, ids, previous);
        }
      }),
    );
    for (const fn of after) await fn();
    const record = (await this.findById(this.db, id)) as ApiRecord;
    await this.env.hooks.run('afterUpdate', { ctx, model: this.model, id, record, existing });
    return (await this.guard.present(ctx, record, this.readable)) as TRecord;
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
    const { scope } = await this.guard.scope(ctx, 'delete');
    const result: RestoreResult = { restored: 0, errors: [] };
    for (const id of ids) {
      try {
        const count = await this.translated(() => {
          const qb = this.db(this.model.table)
            .update({ deleted: live(this.dialect), ...this.modifiedBy(ctx) })
            .where({ id: String(id), deleted: this.dialect.toDb('bool', true) });
          if (scope.delete === 'own') this.guard.ownOnly(ctx, qb);
          return qb;
        });
        if (count === 0) throw notFound(this.model.name, String(id));
        result.restored += 1;
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        result.errors.push({ id: String(id), code: error.code, message: error.message });
      }
    }
    return result;
  }
}
