import type { Database } from './database';

/** Calls `log` with the text of every statement the database runs (not its bound values). */
export function onStatement(database: Database, log: (sql: string) => void): void {
  database.knex.on('query', (query: { sql?: string }) => log(query.sql ?? ''));
}
