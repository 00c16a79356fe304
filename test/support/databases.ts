import { randomBytes } from 'node:crypto';
import knex from 'knex';

/** The databases integration tests loop over: `TEST_DB=sqlite,postgres` (default sqlite). */
export const TEST_DBS = (process.env.TEST_DB ?? 'sqlite')
  .split(/[\s,]+/)
  .filter(Boolean) as ('sqlite' | 'postgres')[];

const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  kind: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database: in-memory SQLite, or a new PostgreSQL database dropped afterwards. */
export async function createTestDatabase(kind: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  if (kind === 'sqlite') return { kind, url: 'sqlite::memory:', drop: async () => undefined };
  const name = `er_test_${randomBytes(6).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`create database "${name}"`);
  } finally {
    await admin.destroy();
  }
  const url = PG_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  return {
    kind,
    url,
    async drop() {
      const db = knex({ client: 'pg', connection: PG_ADMIN_URL, pool: { min: 0, max: 1 } });
      try {
        await db.raw(`drop database if exists "${name}" with (force)`);
      } finally {
        await db.destroy();
      }
    },
  };
}
