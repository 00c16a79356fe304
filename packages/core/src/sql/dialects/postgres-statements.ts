import type { PreparedResult } from './dialect';

/** The part of a pg client that runs a statement, named or not. */
interface PgClient {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

/**
 * Named statements a connection keeps at most: the server holds each until the connection ends,
 * and the fields clients select make many shapes. Past the limit, new texts run unnamed.
 */
const NAMED_PER_CONNECTION = 500;
const namedStatements = new WeakMap<PgClient, Set<string>>();

/** The name to run a statement under on this connection, or undefined (unnamed): for a statement without a name, or once the connection holds the most it may. */
function namedOn(connection: PgClient, name: string): string | undefined {
  if (name === '') return undefined;
  let names = namedStatements.get(connection);
  if (!names) namedStatements.set(connection, (names = new Set()));
  if (names.has(name)) return name;
  if (names.size >= NAMED_PER_CONNECTION) return undefined;
  names.add(name);
  return name;
}

/** feature_not_supported: what a prepared statement answers once the type of a column it reads has changed. */
const STALE_STATEMENT_STATE = '0A000';

/** Whether a statement failed because its prepared form went stale (a column's type changed since). */
export function isStalePostgresStatement(error: unknown): boolean {
  return (error as { code?: unknown }).code === STALE_STATEMENT_STATE && /cached plan must not change result type/.test(String((error as Error).message));
}

/**
 * Runs a statement as a named prepared statement of the connection: the server parses and
 * describes it once per connection, and pg sends only its values after that. A connection whose
 * statement went stale (another process changed the type of a column it reads) is given up:
 * knex's pool destroys it, and with it what it prepared.
 */
export async function runPostgresStatement(connection: unknown, { sql, name }: { sql: string; name: string }, bindings: readonly unknown[]): Promise<PreparedResult> {
  const client = connection as PgClient;
  try {
    const result = await client.query({ name: namedOn(client, name), text: sql, values: bindings as unknown[] });
    return { rows: result.rows, count: result.rowCount ?? 0 };
  } catch (error) {
    if (isStalePostgresStatement(error)) (connection as { __knex__disposed?: unknown }).__knex__disposed = error;
    throw error;
  }
}

/** The parts of knex's client that statements sent past knex go through. */
interface TransactionClient {
  acquireConnection(): Promise<PgClient & { __knexUid?: string; __knexTxId?: string }>;
  emit(event: 'query', query: object): boolean;
}

/** Sends one statement of a transaction (with `$1` … markers for `values`); answers its result. */
export type Send = (text: string, values?: readonly unknown[]) => Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;

/**
 * Sends statements on the connection of a transaction, past knex: pg queues them and sends each
 * as the one before it answers, without waiting for the caller's code. They are announced as
 * knex announces its own (the `query` event), for statement logs and counts.
 */
export async function sendOn(trx: { client: unknown }): Promise<Send> {
  const client = trx.client as TransactionClient;
  const connection = await client.acquireConnection();
  return (text, values = []) => {
    client.emit('query', { __knexUid: connection.__knexUid, __knexTxId: connection.__knexTxId, method: 'raw', sql: text, bindings: values });
    return connection.query({ text, values: values as unknown[] });
  };
}
