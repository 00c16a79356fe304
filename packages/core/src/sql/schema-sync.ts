import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isStoredField, type EntityModel, type FieldModel, type SchemaModel } from '../definition/model';
import type { Database } from './database';
import type { Dialect, Introspection } from './dialects/dialect';
import { isConnectionError } from './dialects/shared';
import { sqlContext, type SqlContext } from './sql-context';

/** One statement schema sync would run, with what it is for. */
export interface SchemaStep {
  description: string;
  sql: string;
  /** The extension this step creates: when it cannot be created, sync warns and skips the steps that need it. */
  extension?: string;
  /** The extension this step needs. */
  needs?: string;
}

/** Extra tables a part of core or a plugin owns (tokens, jobs…), given as column lists. */
export interface AuxiliaryTable {
  name: string;
  /** Column name → full SQL column definition (after the name). */
  columns: Record<string, string>;
  primaryKey: string[];
  /** A column numbered by the database, growing with every row: the primary key (`primaryKey` is ignored). */
  sequence?: string;
  indexes?: { name: string; columns: string[]; unique?: boolean }[];
  /** The table of an entity type (made from its definition): only the indexes listed here are added to it. */
  ofEntity?: boolean;
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Index names fit PostgreSQL's 63 characters; long ones end in a short hash. */
export function indexName(prefix: string, table: string, suffix: string): string {
  const name = `${prefix}_${table}_${suffix}`;
  if (name.length <= 63) return name;
  return `${name.slice(0, 52)}_${createHash('sha1').update(name).digest('hex').slice(0, 10)}`;
}

function columnSql(dialect: Dialect, field: FieldModel): string {
  if (field.name === 'id') return 'varchar(64) not null primary key';
  return dialect.columnType(field.type, field.def.maxLength);
}

export function uniqueIndexNames(model: EntityModel): { name: string; fields: string[]; columns: string[] }[] {
  return [
    ...model.uniqueFields.map((f) => ({
      name: indexName('uq', model.table, f.column),
      fields: [f.name],
      columns: [f.column],
    })),
    ...model.uniqueIndexes.map((u) => ({ ...u, name: indexName('uq', model.table, u.name) })),
  ];
}

/** Every record's version: 1 when created, one more with every write (`ETag`, `If-Match`). */
export const VERSION_COLUMN = 'record_version';
const VERSION_SQL = 'integer not null default 1';

function liveRows(dialect: Dialect): string {
  return `deleted = ${dialect.bool(false)}`;
}

function entitySteps(model: EntityModel, dialect: Dialect, current: Introspection): SchemaStep[] {
  const steps: SchemaStep[] = [];
  const stored = model.fields.filter(isStoredField);
  const existing = current.tables.get(model.table);
  const deletedSql = `boolean not null default ${dialect.bool(false)}`;
  if (!existing) {
    const cols = [...stored.map((f) => `${q(f.column)} ${columnSql(dialect, f)}`), `"deleted" ${deletedSql}`, `${q(VERSION_COLUMN)} ${VERSION_SQL}`];
    steps.push({ description: `create table ${model.table}`, sql: `create table ${q(model.table)} (${cols.join(', ')})` });
  } else {
    for (const f of stored) {
      if (existing.columns.has(f.column)) continue;
      steps.push({
        description: `add column ${model.table}.${f.column}`,
        sql: `alter table ${q(model.table)} add column ${q(f.column)} ${columnSql(dialect, f)}`,
      });
    }
    if (!existing.columns.has('deleted')) {
      steps.push({ description: `add column ${model.table}.deleted`, sql: `alter table ${q(model.table)} add column "deleted" ${deletedSql}` });
    }
    if (!existing.columns.has(VERSION_COLUMN)) {
      steps.push({ description: `add column ${model.table}.${VERSION_COLUMN}`, sql: `alter table ${q(model.table)} add column ${q(VERSION_COLUMN)} ${VERSION_SQL}` });
    }
  }
  for (const u of uniqueIndexNames(model)) {
    if (current.indexes.has(u.name)) continue;
    steps.push({
      description: `unique index ${u.name} on ${model.table} (${u.fields.join(', ')}), live rows`,
      sql: `create unique index ${q(u.name)} on ${q(model.table)} (${u.columns.map(q).join(', ')}) where ${liveRows(dialect)}`,
    });
  }
  for (const f of stored.filter((x) => x.type === 'link' && !x.system)) {
    const name = indexName('ix', model.table, f.column);
    if (current.indexes.has(name)) continue;
    steps.push({ description: `index ${name}`, sql: `create index ${q(name)} on ${q(model.table)} (${q(f.column)})` });
  }
  return [...steps, ...searchSteps(model, dialect, current)];
}

/** The search index of every `searchable` field, where the database has one (dialect.searchIndex). */
function searchSteps(model: EntityModel, dialect: Dialect, current: Introspection): SchemaStep[] {
  const index = dialect.searchIndex;
  if (!index) return [];
  return model.fields
    .filter((f) => isStoredField(f) && f.def.searchable === true)
    .map((f) => ({ name: indexName('search', model.table, f.column as string), column: f.column as string }))
    .filter(({ name }) => !current.indexes.has(name))
    .map(({ name, column }) => ({
      description: `search index ${name} on ${model.table} (${column})`,
      sql: index.create(name, model.table, column),
      needs: index.extension,
    }));
}

/** The extensions the steps need that the database lacks, each created before the first step. */
function extensionSteps(steps: readonly SchemaStep[], current: Introspection): SchemaStep[] {
  const missing = new Set(steps.map((s) => s.needs).filter((e): e is string => e !== undefined && !current.extensions.has(e)));
  return [...missing].map((extension) => ({ description: `extension ${extension}`, sql: `create extension if not exists ${q(extension)}`, extension }));
}

function joinSteps(schema: SchemaModel, current: Introspection): SchemaStep[] {
  const steps: SchemaStep[] = [];
  const seen = new Set<string>();
  for (const model of schema.entities.values()) {
    for (const f of model.fields) {
      if (f.type !== 'linkMultiple' || f.linkKind !== 'manyToMany' || seen.has(f.join.table)) continue;
      seen.add(f.join.table);
      const { table, ownColumn, targetColumn } = f.join;
      const cols = [ownColumn, targetColumn].sort();
      if (!current.tables.has(table)) {
        steps.push({
          description: `create join table ${table}`,
          sql: `create table ${q(table)} (${cols.map((c) => `${q(c)} varchar(64) not null`).join(', ')}, primary key (${cols.map(q).join(', ')}))`,
        });
      }
      for (const c of cols) {
        const name = indexName('ix', table, c);
        if (current.indexes.has(name)) continue;
        steps.push({ description: `index ${name}`, sql: `create index ${q(name)} on ${q(table)} (${q(c)})` });
      }
    }
  }
  return steps;
}

function auxiliarySteps(tables: readonly AuxiliaryTable[], { current, dialect }: { current: Introspection; dialect: Dialect }): SchemaStep[] {
  const steps: SchemaStep[] = [];
  for (const t of tables) {
    const existing = current.tables.get(t.name);
    if (t.ofEntity) {
      // Its columns come from the definition (created by the entity's own steps, which run first).
    } else if (!existing) {
      const cols = Object.entries(t.columns).map(([c, sql]) => `${q(c)} ${sql}`);
      const key = t.sequence ? [`${q(t.sequence)} ${dialect.sequenceColumn}`] : [];
      const primary = t.sequence ? '' : `, primary key (${t.primaryKey.map(q).join(', ')})`;
      steps.push({
        description: `create table ${t.name}`,
        sql: `create table ${q(t.name)} (${[...key, ...cols].join(', ')}${primary})`,
      });
    } else {
      for (const [c, sql] of Object.entries(t.columns)) {
        if (!existing.columns.has(c)) {
          steps.push({ description: `add column ${t.name}.${c}`, sql: `alter table ${q(t.name)} add column ${q(c)} ${sql}` });
        }
      }
    }
    for (const ix of t.indexes ?? []) {
      if (current.indexes.has(ix.name)) continue;
      steps.push({
        description: `index ${ix.name}`,
        sql: `create ${ix.unique ? 'unique ' : ''}index ${q(ix.name)} on ${q(t.name)} (${ix.columns.map(q).join(', ')})`,
      });
    }
  }
  return steps;
}

/**
 * PostgreSQL enforces varchar lengths: a `maxLength` that grew widens the column. A shorter one
 * leaves it as it is (nothing is cut; validation enforces the new limit). SQLite ignores lengths.
 */
async function widenSteps(sql: SqlContext, current: Introspection): Promise<SchemaStep[]> {
  const { db, schema, dialect } = sql;
  if (!dialect.enforcesLength) return [];
  const steps: SchemaStep[] = [];
  for (const model of schema.entities.values()) {
    const sized = model.fields.filter(isStoredField).filter((f) => !f.system && (f.type === 'varchar' || f.type === 'enum'));
    if (!sized.length || !current.tables.has(model.table)) continue;
    const info = (await db(model.table).columnInfo()) as unknown as Record<string, { type: string; maxLength: number | null }>;
    for (const f of sized) {
      const { column } = f;
      const have = info[column];
      const want = f.def.maxLength ?? 255;
      if (!have || have.type !== 'character varying' || have.maxLength === null || Number(have.maxLength) >= want) continue;
      const type = dialect.columnType(f.type, f.def.maxLength);
      steps.push({
        description: `widen column ${model.table}.${column} to ${type}`,
        sql: `alter table ${q(model.table)} alter column ${q(column)} type ${type}`,
      });
    }
  }
  return steps;
}

/** What schema sync would do now: nothing is ever dropped. */
export async function planSchema(sql: SqlContext, auxiliary: readonly AuxiliaryTable[] = []): Promise<SchemaStep[]> {
  const { db, schema, dialect } = sql;
  const current = await dialect.introspect(db);
  const planned = [
    ...[...schema.entities.values()].flatMap((m) => entitySteps(m, dialect, current)),
    ...(await widenSteps(sql, current)),
    ...joinSteps(schema, current),
    ...auxiliarySteps(auxiliary, { current, dialect: sql.dialect }),
  ];
  const steps = [...extensionSteps(planned, current), ...planned];
  // A statement planned twice (one index named by two owners) would fail the second time.
  return steps.filter((step, i) => steps.findIndex((other) => other.sql === step.sql) === i);
}

/**
 * A sync that met another writer: on SQLite, another connection held the write lock longer than a
 * transaction waits for it (`SQLITE_BUSY`); such a sync is tried again with a fresh plan.
 */
function isBusy(dialect: Dialect, error: unknown): boolean {
  if (isConnectionError(error)) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code)) return true;
  return dialect.translateError(error, {})?.code === 'CORE_DATABASE_UNAVAILABLE';
}

/** Outages and lock conflicts are passed on as they are (503, retry); anything else names its step. */
function stepFailed(dialect: Dialect, step: SchemaStep, error: unknown): unknown {
  if (isConnectionError(error) || isBusy(dialect, error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new Error(`Schema sync failed to ${step.description}: ${reason}`, { cause: error });
}

const BUSY_RETRY_MS = 15_000;

/** What schema sync is given besides the definitions. */
export interface SyncOptions {
  /** Tables of core's parts and plugins. */
  auxiliary?: readonly AuxiliaryTable[];
  /** An extension could not be created (the role may not): the steps that need it were skipped. */
  warn?: (message: string, error: unknown) => void;
}

/**
 * Runs the planned steps in order. An extension is created in a savepoint: when the database
 * refuses it, the steps that need it are skipped with a warning and the others still run.
 * Answers the steps that ran.
 */
async function runSteps(trx: Knex.Transaction, steps: readonly SchemaStep[], { dialect, warn }: { dialect: Dialect; warn: SyncOptions['warn'] }): Promise<SchemaStep[]> {
  const done: SchemaStep[] = [];
  const unavailable = new Set<string>();
  for (const step of steps) {
    if (step.needs !== undefined && unavailable.has(step.needs)) continue;
    try {
      await (step.extension === undefined ? trx.raw(step.sql) : trx.transaction((sp) => sp.raw(step.sql)));
      done.push(step);
    } catch (error) {
      if (step.extension === undefined || isConnectionError(error) || isBusy(dialect, error)) throw stepFailed(dialect, step, error);
      unavailable.add(step.extension);
      const skipped = steps.filter((s) => s.needs === step.extension).map((s) => s.description);
      const reason = error instanceof Error ? error.message : String(error);
      warn?.(`schema: could not create the ${step.extension} extension (${reason}); skipped: ${skipped.join(', ')}`, error);
    }
  }
  return done;
}

/** Brings the database in step with the definitions; safe to run from several processes at once. */
export async function syncSchema(database: Database, schema: SchemaModel, { auxiliary = [], warn }: SyncOptions = {}): Promise<SchemaStep[]> {
  const { dialect } = database;
  // Most starts have nothing to do; finding that out needs no lock. Nothing is ever dropped, so it stays true.
  if ((await planSchema(sqlContext({ database, schema }, database.knex), auxiliary)).length === 0) return [];
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await dialect.withSchemaLock(database.knex, async (trx) => {
        return runSteps(trx, await planSchema(sqlContext({ database, schema }, trx), auxiliary), { dialect, warn });
      });
    } catch (error) {
      if (!isBusy(dialect, error) || Date.now() - started > BUSY_RETRY_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20 * Math.min(attempt, 10)));
    }
  }
}
