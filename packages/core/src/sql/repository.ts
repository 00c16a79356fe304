import type { Knex } from 'knex';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/normalize';
import { compileRecordValidator, isValidId, type RecordValidator } from '../definition/validate-record';
import { ApiError, notFound } from '../errors';
import { forbidden, type UserAccess } from '../auth/access-control';
import type { HookRegistry } from '../hooks';
import { nowDateTime } from '../time';
import { uuidv7 } from '../util/uuid';
import type { Database } from './database';
import { isConnectionError, databaseUnavailable } from './dialects/shared';
import { assertLinkTargets, currentLinkIds, detachEverywhere, writeMultipleLink } from './link-writes';
import { decodeRows, live, loadMultipleLinks, outputKeys, selectRecords, shapeRecord, sortColumn } from './read-query';
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
}

/**
 * Reads and writes records of one entity type. Methods validate their input, run hooks and
 * translate database errors; field names reach SQL only through the definition.
 */
export class Repository<TRecord extends ApiRecord = ApiRecord> {
  readonly model: EntityModel;
  private readonly env: RepositoryEnvironment;
  private readonly validate: RecordValidator;
  private readonly readable: FieldModel[];
  private readonly uniqueByKey: Map<string, string[]>;

  constructor(env: RepositoryEnvironment, model: EntityModel) {
    this.env = env;
    this.model = model;
    this.validate = compileRecordValidator(model);
    this.readable = model.fields.filter((f) => !f.def.writeOnly);
    this.uniqueByKey = new Map([['id', ['id']]]);
    for (const u of uniqueIndexNames(model)) {
      this.uniqueByKey.set(u.name, u.fields);
      this.uniqueByKey.set(u.columns.join(','), u.fields);
    }
  }

  /** The caller's rights, resolved once per context. */
  private async access(ctx: RequestContext): Promise<UserAccess> {
    return (ctx.access ??= await this.env.accessFor(ctx.user));
  }

  /** Refuses an action the role does not allow on this entity type at all (403). */
  private async scopeFor(ctx: RequestContext, action: 'read' | 'edit' | 'delete' | 'create') {
    const access = await this.access(ctx);
    const scope = access.scope(this.model.name);
    if (action === 'create' ? !scope.create : scope[action] === 'no') {
      throw forbidden(`Not allowed to ${action} ${this.model.name}`);
    }
    return { access, scope };
  }

  private canRead(access: UserAccess, field: FieldModel): boolean {
    return field.system || access.field(this.model.name, field.name).read;
  }

  /** Whether the record belongs to the user: created by them or assigned to them. */
  private isOwn(ctx: RequestContext, record: ApiRecord): boolean {
    const id = ctx.user?.id;
    return !!id && (record.createdById === id || record.assignedUserId === id);
  }

  /** Restricts a query to the user's own records. */
  private ownOnly(ctx: RequestContext, qb: Knex.QueryBuilder): void {
    const t = this.model.table;
    const assigned = this.model.field.get('assignedUser');
    qb.where((w) => {
      w.where(`${t}.created_by_id`, ctx.user?.id ?? '');
      if (assigned?.column) w.orWhere(`${t}.${assigned.column}`, ctx.user?.id ?? '');
    });
  }

  /** Readable fields, or 403 when the select names one the user may not read. */
  private readableFields(access: UserAccess, select: readonly string[] | undefined): FieldModel[] {
    const fields = this.selectFields(select);
    if (select?.length) {
      const hidden = fields.find((f) => !this.canRead(access, f));
      if (hidden) throw forbidden(`Not allowed to read ${this.model.name}.${hidden.name}`);
      return fields;
    }
    return fields.filter((f) => this.canRead(access, f));
  }

  /** 403 when the body changes a field the user may not edit. */
  private assertEditable(access: UserAccess, values: Map<FieldModel, unknown>, existing: ApiRecord | undefined): void {
    for (const [field, value] of values) {
      if (access.field(this.model.name, field.name).edit) continue;
      if (existing && sameValue(field, existing[field.key], value)) {
        values.delete(field);
        continue;
      }
      throw forbidden(`Not allowed to edit ${this.model.name}.${field.name}`);
    }
  }

  /** A record the caller may see, else 404 (no existence oracle for `own`). */
  private async visible(ctx: RequestContext, id: string, fields?: FieldModel[]): Promise<ApiRecord> {
    const { scope } = await this.scopeFor(ctx, 'read');
    const record = await this.findById(this.db, id, fields);
    if (!record || (scope.read === 'own' && !this.isOwn(ctx, record))) throw notFound(this.model.name, id);
    return record;
  }

  /** Drops fields the user may not read from a record about to be returned. */
  private async present(ctx: RequestContext, record: ApiRecord): Promise<ApiRecord> {
    const access = await this.access(ctx);
    if (access.unrestricted) return record;
    const out: Record<string, unknown> = {};
    const allowed = new Set(outputKeys(this.readable.filter((f) => this.canRead(access, f))));
    for (const [k, v] of Object.entries(record)) if (allowed.has(k)) out[k] = v;
    return out as ApiRecord;
  }

  private get db(): Knex {
    return this.env.database.knex;
  }

  private whereContext(): WhereContext {
    return { schema: this.env.schema, dialect: this.env.database.dialect, model: this.model };
  }

  /** Driver errors become API errors: unique → 409, lost connection → 503. */
  private translate(error: unknown): unknown {
    if (error instanceof ApiError) return error;
    const translated = this.env.database.dialect.translateError(error, {
      entity: this.model.name,
      uniqueFields: (key) => this.uniqueByKey.get(key),
    });
    if (translated) return translated;
    if (isConnectionError(error)) return databaseUnavailable(error);
    return error;
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw this.translate(error);
    }
  }

  /** Resolves `select` names (`name`, `brand`, `brandId`, `brandName`) to fields; `id` is always in. */
  private selectFields(select: readonly string[] | undefined): FieldModel[] {
    if (!select || select.length === 0) return this.readable;
    const chosen = new Set<FieldModel>([this.model.field.get('id') as FieldModel]);
    for (const name of select) {
      const field = this.model.byKey.get(name) ?? this.model.field.get(name) ?? this.model.field.get(name.replace(/Names?$/, ''));
      if (!field || field.def.writeOnly || (name !== field.key && name !== field.name && !/Names?$/.test(name))) {
        throw invalidQuery(`Unknown field '${name}' in select for ${this.model.name}`, { field: name });
      }
      chosen.add(field);
    }
    return this.readable.filter((f) => chosen.has(f));
  }

  private sortField(sortBy: string | undefined): FieldModel {
    if (sortBy === undefined || sortBy === '') return this.model.field.get('id') as FieldModel;
    const field = this.model.byKey.get(sortBy) ?? this.model.field.get(sortBy) ?? this.model.field.get(sortBy.replace(/Name$/, ''));
    if (!field || !field.column || field.def.writeOnly || field.type === 'jsonObject' || field.type === 'multiEnum') {
      throw invalidQuery(`Cannot sort ${this.model.name} by '${sortBy}'`, { field: sortBy });
    }
    return field;
  }

  private async hydrate(db: Knex | Knex.Transaction, fields: FieldModel[], rows: Record<string, unknown>[]): Promise<ApiRecord[]> {
    const { schema, database } = this.env;
    decodeRows(database.dialect, fields, rows);
    await loadMultipleLinks(db, schema, database.dialect, fields, rows as ApiRecord[]);
    const keys = outputKeys(fields);
    return rows.map((row) => shapeRecord(keys, row));
  }

  /** A page of live records with the total count. */
  async find(ctx: RequestContext, params: FindParams = {}): Promise<FindResult<TRecord>> {
    const { schema, database, maxListSize, defaultListSize } = this.env;
    const maxSize = params.maxSize ?? defaultListSize;
    const offset = params.offset ?? 0;
    if (maxSize > maxListSize) throw invalidQuery(`maxSize must not exceed ${maxListSize}`);
    asNonNegativeInt(offset, 'offset');
    const { access, scope } = await this.scopeFor(ctx, 'read');
    const fields = this.readableFields(access, params.select);
    const sort = this.sortField(params.sortBy);
    if (!this.canRead(access, sort)) throw forbidden(`Not allowed to sort by ${this.model.name}.${sort.name}`);
    const whereCtx: WhereContext = {
      ...this.whereContext(),
      onField: (field) => {
        if (!this.canRead(access, field)) throw forbidden(`Not allowed to filter by ${this.model.name}.${field.name}`);
      },
    };
    const filter = (qb: Knex.QueryBuilder) => {
      applyWhere(qb, params.where ?? [], whereCtx);
      if (scope.read === 'own') this.ownOnly(ctx, qb);
    };
    return this.guard(async () => {
      const result: FindResult<TRecord> = {};
      if (!params.collectionOnly) {
        const countQuery = this.db(this.model.table).where(`${this.model.table}.deleted`, live(database.dialect) as never);
        filter(countQuery);
        const [{ total }] = await countQuery.count({ total: '*' });
        result.total = Number(total);
      }
      if (!params.totalOnly) {
        if (result.total === 0 || maxSize === 0) {
          result.list = [];
        } else {
          const qb = selectRecords(this.db, schema, database.dialect, this.model, fields);
          filter(qb);
          const direction = params.asc === false ? 'desc' : 'asc';
          qb.orderBy(sortColumn(schema, this.model, sort), direction);
          if (sort.name !== 'id') qb.orderBy(`${this.model.table}.id`, direction);
          const rows = await qb.offset(offset).limit(maxSize);
          result.list = (await this.hydrate(this.db, fields, rows)) as TRecord[];
        }
      }
      return result;
    });
  }

  /** One live record; 404 when it does not exist or is deleted. */
  async get(ctx: RequestContext, id: string, options: { select?: readonly string[] } = {}): Promise<TRecord> {
    const { access } = await this.scopeFor(ctx, 'read');
    const record = await this.visible(ctx, id, this.readableFields(access, options.select));
    await this.env.hooks.run('afterRead', { ctx, model: this.model, id, record });
    return record as TRecord;
  }

  private async findById(db: Knex | Knex.Transaction, id: string, fields = this.readable): Promise<ApiRecord | undefined> {
    if (!isValidId(id)) return undefined;
    const { schema, database } = this.env;
    return this.guard(async () => {
      const rows = await selectRecords(db, schema, database.dialect, this.model, fields).where(`${this.model.table}.id`, id);
      if (rows.length === 0) return undefined;
      return (await this.hydrate(db, fields, rows))[0];
    });
  }

  /** The columns every change sets: when, by whom, and in a delegated session through whom. */
  private modifiedBy(ctx: RequestContext): Record<string, unknown> {
    return { modified_at: nowDateTime(), modified_by_id: ctx.user?.id ?? null, modified_by_actor_id: ctx.actor?.id ?? null };
  }

  /** Splits validated values into stored columns and multiple links. */
  private toRow(values: Map<FieldModel, unknown>): { row: Record<string, unknown>; links: [FieldModel, string[]][] } {
    const { dialect } = this.env.database;
    const row: Record<string, unknown> = {};
    const links: [FieldModel, string[]][] = [];
    for (const [field, value] of values) {
      if (field.type === 'linkMultiple') links.push([field, [...new Set(value as string[])]]);
      else row[field.column as string] = dialect.toDb(field.type, value);
    }
    return { row, links };
  }

  /** Creates a record; the body may carry an `id` of 1 to 64 characters `[A-Za-z0-9_-]`. */
  async create(ctx: RequestContext, body: Record<string, unknown>): Promise<TRecord> {
    const { access } = await this.scopeFor(ctx, 'create');
    const data = { ...body };
    await this.env.hooks.run('beforeCreate', { ctx, model: this.model, data });
    const id = data.id === undefined || data.id === null || data.id === '' ? uuidv7() : data.id;
    if (!isValidId(id)) {
      throw new ApiError('CORE_INVALID_ID', 'id must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -', { details: { id } });
    }
    const values = this.validate(data, 'create');
    this.assertWritable(values, undefined);
    this.assertEditable(access, new Map([...values].filter(([f]) => f.key in data)), undefined);
    const { row, links } = this.toRow(values);
    const now = nowDateTime();
    const userId = ctx.user?.id ?? null;
    const actorId = ctx.actor?.id ?? null;
    Object.assign(row, { id, created_at: now, modified_at: now, created_by_id: userId, modified_by_id: userId });
    Object.assign(row, { created_by_actor_id: actorId, modified_by_actor_id: actorId });
    await this.guard(() =>
      this.db.transaction(async (trx) => {
        await assertLinkTargets(trx, this.env.schema, this.env.database.dialect, values);
        await trx(this.model.table).insert(row);
        for (const [field, ids] of links) await writeMultipleLink(trx, this.env.schema, field, id, ids, []);
      }),
    );
    const record = (await this.findById(this.db, id)) as ApiRecord;
    await this.env.hooks.run('afterCreate', { ctx, model: this.model, id, record });
    return (await this.present(ctx, record)) as TRecord;
  }

  /** Read-only fields may be sent back unchanged, never changed. */
  private assertWritable(values: Map<FieldModel, unknown>, existing: ApiRecord | undefined): void {
    for (const [field, value] of values) {
      if (!field.def.readOnly) continue;
      if (existing && JSON.stringify(existing[field.key] ?? null) === JSON.stringify(value ?? null)) {
        values.delete(field);
        continue;
      }
      if (!existing && JSON.stringify(field.def.default ?? null) === JSON.stringify(value ?? null)) continue;
      throw new ApiError('CORE_READ_ONLY_FIELD', `${field.key} is read-only`, {
        details: { issues: [{ path: [field.key], code: 'read_only', message: `${field.key} is read-only` }] },
      });
    }
  }

  /** Changes the fields present in the body; an update that changes nothing writes nothing. */
  async update(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<TRecord> {
    const existing = await this.visible(ctx, id);
    const { access, scope } = await this.scopeFor(ctx, 'edit');
    if (scope.edit === 'own' && !this.isOwn(ctx, existing)) throw forbidden(`Not allowed to edit this ${this.model.name}`);
    const data = { ...body };
    if (data.id !== undefined && data.id !== id) {
      throw new ApiError('CORE_READ_ONLY_FIELD', 'id cannot be changed', {
        details: { issues: [{ path: ['id'], code: 'read_only', message: 'id cannot be changed' }] },
      });
    }
    delete data.id;
    await this.env.hooks.run('beforeUpdate', { ctx, model: this.model, id, data, existing });
    const values = this.validate(data, 'update');
    this.assertWritable(values, existing);
    this.assertEditable(access, values, existing);
    const changed = new Map([...values].filter(([field, value]) => !sameValue(field, existing[field.key], value)));
    if (changed.size > 0) {
      const { row, links } = this.toRow(changed);
      Object.assign(row, this.modifiedBy(ctx));
      await this.guard(() =>
        this.db.transaction(async (trx) => {
          await assertLinkTargets(trx, this.env.schema, this.env.database.dialect, changed);
          const count = await trx(this.model.table).update(row).where({ id, deleted: live(this.env.database.dialect) });
          if (count === 0) throw notFound(this.model.name, id);
          for (const [field, ids] of links) {
            const previous = await currentLinkIds(trx, this.env.schema, this.env.database.dialect, field, id);
            await writeMultipleLink(trx, this.env.schema, field, id, ids, previous);
          }
        }),
      );
    }
    const record = (await this.findById(this.db, id)) as ApiRecord;
    await this.env.hooks.run('afterUpdate', { ctx, model: this.model, id, record, existing });
    return (await this.present(ctx, record)) as TRecord;
  }

  /** Soft-deletes (the row stays, invisible, and frees its unique values) or removes the row. */
  async delete(ctx: RequestContext, id: string, options: { permanently?: boolean } = {}): Promise<void> {
    const existing = await this.visible(ctx, id);
    const { scope } = await this.scopeFor(ctx, 'delete');
    if (scope.delete === 'own' && !this.isOwn(ctx, existing)) throw forbidden(`Not allowed to delete this ${this.model.name}`);
    await this.env.hooks.run('beforeDelete', { ctx, model: this.model, id, existing });
    const { dialect } = this.env.database;
    await this.guard(() =>
      this.db.transaction(async (trx) => {
        if (options.permanently) {
          await detachEverywhere(trx, this.env.schema, this.model, id);
          await trx(this.model.table).delete().where({ id });
        } else {
          await trx(this.model.table)
            .update({ deleted: dialect.toDb('bool', true), ...this.modifiedBy(ctx) })
            .where({ id, deleted: live(dialect) });
        }
      }),
    );
    await this.env.hooks.run('afterDelete', { ctx, model: this.model, id, existing });
  }

  /** Brings soft-deleted records back; one that would collide with a live unique value is an error. */
  async restore(ctx: RequestContext, ids: readonly string[]): Promise<RestoreResult> {
    const { scope } = await this.scopeFor(ctx, 'delete');
    const result: RestoreResult = { restored: 0, errors: [] };
    const { dialect } = this.env.database;
    for (const id of ids) {
      try {
        const count = await this.guard(() => {
          const qb = this.db(this.model.table)
            .update({ deleted: live(dialect), ...this.modifiedBy(ctx) })
            .where({ id: String(id), deleted: dialect.toDb('bool', true) });
          if (scope.delete === 'own') this.ownOnly(ctx, qb);
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

/** Stored and new value are the same (multiple links compared as sets). */
function sameValue(field: FieldModel, stored: unknown, next: unknown): boolean {
  if (field.type === 'linkMultiple') {
    const a = new Set((stored as string[] | null) ?? []);
    const b = new Set((next as string[] | null) ?? []);
    return a.size === b.size && [...a].every((x) => b.has(x));
  }
  if (field.type === 'float' && typeof stored === 'number' && typeof next === 'number') return stored === next;
  return JSON.stringify(stored ?? null) === JSON.stringify(next ?? null);
}
