import type { PreparedAttributeWrite } from '../attributes/record-attributes';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import { isStoredField, type EntityModel, type FieldModel } from '../definition/model';
import { compileRecordValidator, type RecordValidator } from '../definition/validate-record';
import { ApiError } from '../errors';
import type { QueryBuilder } from '../sql/database';
import type { ErrorContext } from '../sql/dialects/dialect';
import { databaseUnavailable, isConnectionError } from '../sql/dialects/shared';
import { findAnyRow, incrementBelow } from '../sql/record-store';
import { uniqueIndexNames } from '../sql/schema-sync';
import { sqlContext, type SqlContext } from '../sql/sql-context';
import { applyWhere } from '../sql/where';
import { createRecord, insertRecord, type NewRecord } from './create';
import { deleteRecord } from './delete';
import type { LinkObjectWrite } from './find-or-create';
import { RecordGuard } from './guard';
import type { LinkDelta } from './link-delta';
import { changeLinks, type LinkChange } from './links';
import { findLinkedRecords, findRecordsByIds, listRecords } from './list';
import { getRecord, visibleRecord } from './read';
import { makeReadPlan, readShapeKey, type ReadPlan, type ReadShape } from './read-plan';
import { ShapeCache } from '../util/shape-cache';
import type { FindParams, FindResult, ListOptions, RepositoryEnvironment, RestoreResult } from './repository-types';
import { restoreRecords } from './restore';
import { permitsUnlinking } from './unlink-rule';
import { assertUpdateBody, editableRecord, updateRecord, type Preconditions } from './update';
import { isOwn } from './write-rules';

export type { AfterCommit, FindParams, FindResult, RepositoryEnvironment, RestoreResult } from './repository-types';

/**
 * Reads and writes records of one entity type. Every write passes the rules of CONTRACT §15
 * (`write-rules.ts`, `link-rules.ts`), runs hooks and translates database errors; field names
 * reach SQL only through the definition.
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
  /** @internal Queries on the pool: built once, used by every read. */
  readonly sql: SqlContext;
  /** @internal The fields that make a record the user's own (`own` levels): createdBy, and assignedUser if defined. */
  readonly ownerFields: FieldModel[];
  private readonly readPlans = new ShapeCache<ReadPlan>();
  private commonPlan?: ReadPlan;
  private readonly uniqueByKey: Map<string, string[]>;
  /** @internal What a driver error of this entity type's table can name: its entity and unique fields (see `translated`). */
  readonly errorContext: ErrorContext;

  constructor(env: RepositoryEnvironment, model: EntityModel) {
    this.env = env;
    this.model = model;
    this.validate = compileRecordValidator(model);
    this.guard = new RecordGuard(model, env.accessFor, env.schema);
    this.readable = model.fields.filter((f) => !f.def.writeOnly);
    this.sql = sqlContext(env, env.database.knex);
    this.ownerFields = this.readable.filter((f) => f.name === 'createdBy' || f.name === 'assignedUser');
    // SQLite names the column of a taken id, PostgreSQL the primary key constraint.
    this.uniqueByKey = new Map([['id', ['id']], [`${model.table}_pkey`, ['id']]]);
    for (const u of uniqueIndexNames(model)) {
      this.uniqueByKey.set(u.name, u.fields);
      this.uniqueByKey.set(u.columns.join(','), u.fields);
    }
    this.errorContext = { entity: model.name, uniqueFields: (key) => this.uniqueByKey.get(key), ofTable: (table) => this.otherTableContext(table) };
  }

  /** The error context of another entity type's table (a write of a one-to-many list writes the rows of its records). */
  private otherTableContext(table: string): ErrorContext | undefined {
    if (table === this.model.table) return undefined;
    for (const other of this.env.schema.entities.values()) if (other.table === table) return this.env.repository(other.name).errorContext;
    return undefined;
  }

  /** @internal What reads of one shape need (keys, decoding, the select by id), worked out once per shape. */
  readPlan(shape: ReadShape): ReadPlan {
    // The most common shape (every readable field, names, nothing extra) is found without making its key.
    const common = shape.fields === this.readable && !shape.extra?.length && shape.names !== false;
    if (common && this.commonPlan) return this.commonPlan;
    const plan = this.readPlans.get(readShapeKey(shape), () => makeReadPlan(this.sql, this.model, shape));
    if (common) this.commonPlan = plan;
    return plan;
  }

  /** @internal Driver errors become API errors: unique → 409, lost connection → 503. */
  async translated<TResult>(fn: () => Promise<TResult>): Promise<TResult> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof ApiError) throw error;
      const api = this.env.database.dialect.translateError(error, this.errorContext);
      if (api) throw api;
      if (isConnectionError(error)) throw databaseUnavailable(error);
      throw error;
    }
  }

  /**
   * A page of live records with the total count, shaped by the present stage (plugins; `_meta`
   * with `ctx.withMeta`).
   */
  async find(ctx: RequestContext, params: FindParams = {}): Promise<FindResult<TRecord>> {
    return listRecords(this, ctx, { params, kind: 'list' });
  }

  /**
   * The live records with these ids that the caller may read (with `systemContext()`: all), by
   * id, in as few queries as the ids need (500 per query), whatever `maxListSize` says.
   */
  async findByIds(ctx: RequestContext, ids: Iterable<string>, options: { select?: readonly string[] } = {}): Promise<Map<string, TRecord>> {
    return findRecordsByIds(this, ctx, { ids, select: options.select });
  }

  /**
   * Whether the caller's roles allow an action on this record (`own`: created by or assigned to
   * the caller). The record needs `createdById` (and `assignedUserId` when the entity has one).
   * Editing and deleting also need the right to read the record: every write route reads it
   * first, and refuses one the caller may not read (403 for `read: 'no'`, 404 under `own`), so a
   * role with `edit: 'all'` and `read: 'no'` may change nothing, whatever its `edit` says.
   */
  async permits(ctx: RequestContext, action: 'read' | 'edit' | 'delete', record: ApiRecord): Promise<boolean> {
    if (action !== 'read' && this.model.def.serverWritten && ctx.user) return false;
    const scope = (await this.guard.access(ctx)).scope(this.model.name);
    const reaches = (level: string) => level === 'all' || (level === 'own' && isOwn(ctx, record));
    return reaches(scope.read) && reaches(scope[action]);
  }

  /**
   * For each of `listed`, whether the caller may take it off the link `link` of the record `from`
   * through the link routes (`DELETE /{Entity}/{id}/{link}`), by the rules that route applies: no
   * for a system link, a read-only link or a required single link, nor where the caller may not
   * edit `from`, the link or, when unlinking writes them too, the listed records. The records
   * need the keys `permits` reads.
   */
  async permitsUnlinking(ctx: RequestContext, options: { link: string; from: ApiRecord; listed: readonly ApiRecord[] }): Promise<boolean[]> {
    return permitsUnlinking(this, ctx, options);
  }

  /** @internal A page for a list, a linked-record response, or `findByIds` (no size limit). */
  async list(ctx: RequestContext, params: FindParams, options: ListOptions): Promise<FindResult<TRecord>> {
    return listRecords(this, ctx, { params, ...options });
  }

  /** One live record; 404 when it does not exist, is deleted, or is not the user's under `own`. */
  async get(ctx: RequestContext, id: string, options: { select?: readonly string[] } = {}): Promise<TRecord> {
    return getRecord(this, ctx, { id, select: options.select });
  }

  /**
   * The records linked to one record through `link`, with the list parameters (the link's target
   * entity is listed, with the caller's rights on it).
   */
  async findLinked(ctx: RequestContext, { id, link }: { id: string; link: string }, params: FindParams = {}): Promise<FindResult> {
    return findLinkedRecords(this, ctx, { id, link, params });
  }

  /**
   * @internal A record the caller may see, else 404 (no existence oracle for `own`); 403 without
   * read rights. `present` fields (for the present stage) stay in the record.
   */
  async visible(ctx: RequestContext, read: { id: string; fields?: FieldModel[]; present?: readonly FieldModel[] }): Promise<ApiRecord> {
    return visibleRecord(this, ctx, read);
  }

  /**
   * Creates a record; the body may carry an `id` of 1 to 64 characters `[A-Za-z0-9_-]`. `newId` is
   * the id the system gives it when the body has none.
   */
  async create(ctx: RequestContext, body: Record<string, unknown>, { newId }: { newId?: string } = {}): Promise<TRecord> {
    return createRecord(this, ctx, { body, newId });
  }

  /**
   * @internal The create inside a transaction the caller owns (find-or-create of linked records,
   * whose before-hooks run inside that transaction).
   */
  async insertWithin(write: LinkObjectWrite, record: NewRecord): Promise<string> {
    return insertRecord(this, write, record);
  }

  /** Changes the fields present in the body; an update that changes nothing writes nothing. */
  async update(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<TRecord> {
    return (await this.updateRecord(ctx, { id, body })).record;
  }

  /**
   * `update` of the record `id` with `body`, only while the record is at a version `ifMatch` (the
   * `If-Match` header) names and at none `ifNoneMatch` (`If-None-Match`) names, else 412
   * `CORE_PRECONDITION_FAILED` and nothing is written (judged after the rights and the body).
   */
  async updateIf(ctx: RequestContext, { id, body, ifMatch, ifNoneMatch }: Preconditions & { id: string; body: Record<string, unknown> }): Promise<TRecord> {
    return (await updateRecord(this, ctx, { id, body, ifMatch, ifNoneMatch })).record;
  }

  /** @internal `update`, telling also whether it wrote anything (upsert's `Updated` or `NotModified`). */
  async updateRecord(ctx: RequestContext, { id, body, links }: { id: string; body: Record<string, unknown>; links?: readonly LinkDelta[] }): Promise<{ record: TRecord; written: boolean }> {
    return updateRecord(this, ctx, { id, body, links });
  }

  /**
   * @internal Writes attribute values planned by the attribute endpoints, as an update of the
   * record (its rules, its transaction, its modification time); true when something changed.
   */
  async writeAttributes(ctx: RequestContext, { id, attributes, ifMatch, ifNoneMatch }: Preconditions & { id: string; attributes: PreparedAttributeWrite }): Promise<boolean> {
    return (await updateRecord(this, ctx, { id, body: {}, attributes, answer: false, ifMatch, ifNoneMatch })).written;
  }

  /** @internal 400 or 403 for what no update could take (see `assertUpdateBody`): mass updates check it before they start. */
  async assertUpdateBody(ctx: RequestContext, write: { body: Record<string, unknown>; links?: readonly string[] }): Promise<void> {
    await assertUpdateBody(this, ctx, write);
  }

  /** @internal Checks that the caller may edit the record (404 unless visible, 403 beyond the edit right); reads only its id and owner. */
  async editable(ctx: RequestContext, id: string): Promise<void> {
    await editableRecord(this, ctx, { id, fields: this.readable.filter((f) => f.name === 'id'), names: false });
  }

  /**
   * Soft-deletes (the row stays, invisible, and frees its unique values) or removes the row; with
   * `ifMatch` (the `If-Match` header) only a record at a version it names, with `ifNoneMatch`
   * (`If-None-Match`) only one at none it names (else 412; judged after the rights).
   */
  async delete(ctx: RequestContext, id: string, options: Preconditions & { permanently?: boolean } = {}): Promise<void> {
    return deleteRecord(this, ctx, { id, ...options });
  }

  /**
   * Links (`add`) or unlinks (`remove`) records through one link of a record: an update of that
   * link alone, with every rule of an update, logged as `Relate` or `Unrelate`.
   */
  async changeLinks(ctx: RequestContext, change: LinkChange): Promise<void> {
    return changeLinks(this, ctx, change);
  }

  /** 403 when the caller's roles may not do `action` to records of this type at all. */
  async assertAllowed(ctx: RequestContext, action: 'create' | 'read' | 'edit' | 'delete'): Promise<void> {
    await this.guard.scope(ctx, action);
  }

  /**
   * Trusted, for plugins acting as the system: the stored values of some fields of one record,
   * live or soft-deleted (`deleted` tells which), past every permission and hook (a file's storage
   * key, which no client reads). Undefined when no row has the id.
   */
  async readStored(id: string, fields: readonly string[]): Promise<(Record<string, unknown> & { deleted: boolean }) | undefined> {
    const models = fields.map((name) => this.model.field.get(name)).filter((f) => f !== undefined && isStoredField(f));
    if (models.length !== fields.length) throw new ApiError('CORE_INTERNAL', `readStored names a field ${this.model.name} does not store: ${fields.join(', ')}`);
    const row = await this.translated(() => findAnyRow(this.sql, this.model, { id, fields: models }));
    if (!row) return undefined;
    return Object.fromEntries([['deleted', row.deleted === true], ...models.map((f) => [f.name, row[f.key]])]) as Record<string, unknown> & { deleted: boolean };
  }

  /**
   * Trusted, for plugins acting as the system: adds 1 to the int field `counter` of a live record
   * in one statement, only while it is below the int field `limit` (null: no limit) and the record
   * meets `where` (the conditions of lists): concurrent callers on any number of processes never
   * pass the limit together (a share link's uses). Answers whether it counted.
   */
  async incrementBelow(id: string, { counter, limit, where = [] }: { counter: string; limit: string; where?: readonly unknown[] }): Promise<boolean> {
    const column = (name: string) => {
      const field = this.model.field.get(name);
      if (field?.type !== 'int' || !isStoredField(field)) throw new ApiError('CORE_INTERNAL', `${this.model.name}.${name} is no stored int field`);
      return field.column;
    };
    const whereCtx = { schema: this.env.schema, dialect: this.env.database.dialect, model: this.model };
    const filter = (qb: QueryBuilder) => applyWhere(qb, where, whereCtx);
    return this.translated(() => incrementBelow(this.sql, this.model, { id, counter: column(counter), limit: column(limit), filter }));
  }

  /** Brings soft-deleted records back; one that would collide with a live unique value is an error. */
  async restore(ctx: RequestContext, ids: readonly string[]): Promise<RestoreResult> {
    return restoreRecords(this, ctx, ids);
  }
}
