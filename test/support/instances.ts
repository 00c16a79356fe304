import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EntityApi } from '@entity-records/core';
import { createTestDatabase, type TestDatabase } from './databases';

/** A logger that says nothing. */
export const silent = { info() {}, warn() {}, error() {} };

/** A database that survives a restart of the instance: a temporary SQLite file or a new PostgreSQL database. */
export async function durableDatabase(kind: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  if (kind === 'postgres') return createTestDatabase(kind);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'er-db-'));
  return { kind, url: `sqlite:${path.join(dir, 'db.sqlite')}`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Index name → its SQL, read from the database's own catalogue (pg_indexes, sqlite_master). */
export async function databaseIndexes(api: EntityApi): Promise<Map<string, string>> {
  const db = api.database.knex;
  const rows: { name: string; sql: string }[] =
    api.database.dialect.name === 'postgres'
      ? (await db.raw('select indexname as name, indexdef as sql from pg_indexes where schemaname = current_schema()')).rows
      : await db.raw("select name, sql from sqlite_master where type = 'index' and sql is not null");
  return new Map(rows.map((r) => [r.name, r.sql.replace(/\s+/g, ' ')]));
}

/**
 * A durable database for each test of the describe block it is called in, and the instances a
 * test starts on it (`track`): every one still open is closed, and the database dropped, after
 * each test. `stop` closes one early (a restart).
 */
export function instancesPerTest(kind: 'sqlite' | 'postgres') {
  let current: TestDatabase | undefined;
  const open: EntityApi[] = [];
  beforeEach(async () => {
    current = await durableDatabase(kind);
  });
  afterEach(async () => {
    for (const api of open.splice(0)) await api.close();
    await current?.drop();
  });
  return {
    get db(): TestDatabase {
      if (!current) throw new Error('no database outside a test');
      return current;
    },
    track(api: EntityApi): EntityApi {
      open.push(api);
      return api;
    },
    async stop(api: EntityApi): Promise<void> {
      open.splice(open.indexOf(api), 1);
      await api.close();
    },
  };
}
