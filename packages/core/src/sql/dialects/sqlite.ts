import type { FieldType } from '../../declarations';
import type { Dialect, Introspection } from './dialect';
import { commonColumnType, databaseUnavailable, parseJson, uniqueViolation } from './shared';

const JSON_TYPES: ReadonlySet<FieldType> = new Set(['multiEnum', 'jsonObject']);

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  likeOperator: 'like',
  // One writer at a time (the pool has one connection): nothing to order.
  locksRows: false,

  isDeadlock() {
    return false;
  },

  columnType(type, maxLength) {
    return type === 'float' ? 'real' : commonColumnType(type, maxLength);
  },

  fromDb(type, value) {
    if (value === null || value === undefined) return null;
    if (type === 'bool') return value === 1 || value === true;
    if (JSON_TYPES.has(type)) return parseJson(value);
    return value;
  },

  toDb(type, value) {
    if (value === null || value === undefined) return null;
    if (type === 'bool') return value ? 1 : 0;
    if (JSON_TYPES.has(type)) return JSON.stringify(value);
    return value;
  },

  jsonArrayAnyOf(column, count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    return `exists (select 1 from json_each(${column}) where json_each.value in (${marks}))`;
  },

  jsonArrayRows(count) {
    const marks = Array.from({ length: count }, () => '?').join(', ');
    // ORDER BY inside an aggregate needs SQLite 3.44 or later; better-sqlite3 12 bundles a later one.
    return `json_group_array(json_array(${marks}) order by ?)`;
  },

  async introspect(db) {
    const result: Introspection = { tables: new Map(), indexes: new Set() };
    const objects: { type: string; name: string }[] = await db.raw(
      "select type, name from sqlite_master where type in ('table', 'index') and name not like 'sqlite_%'",
    );
    for (const o of objects) {
      if (o.type === 'index') result.indexes.add(o.name);
    }
    for (const o of objects.filter((x) => x.type === 'table')) {
      const columns: { name: string }[] = await db.raw(`pragma table_info("${o.name.replaceAll('"', '""')}")`);
      result.tables.set(o.name, { columns: new Set(columns.map((c) => c.name)) });
    }
    return result;
  },

  async withSchemaLock(db, fn) {
    return db.transaction(fn);
  },

  translateError(error, context) {
    const code = (error as { code?: string } | null)?.code;
    if (typeof code !== 'string') return undefined;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      const message = (error as Error).message;
      const index = /index '([^']+)'/.exec(message)?.[1];
      const columns = /constraint failed: (.+)$/.exec(message)?.[1];
      const key = index ?? (columns ?? '').split(', ').map((c) => c.split('.').pop()).join(',');
      return uniqueViolation(context, key, error);
    }
    // better-sqlite3 reports extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE…).
    if (/^SQLITE_(BUSY|LOCKED|CANTOPEN)/.test(code)) return databaseUnavailable(error);
    return undefined;
  },
};
