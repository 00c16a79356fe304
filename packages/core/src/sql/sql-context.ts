import type { SchemaModel } from '../definition/normalize';
import { routingOf, type ChangeRouting } from './change-routing';
import type { Connection, Database } from './database';
import type { Dialect } from './dialects/dialect';
import type { PreparedStatement } from './prepared';
import type { ShapeCache } from '../util/shape-cache';

/** Statements compiled once, by the shape of their query. */
export type StatementShapes = ShapeCache<PreparedStatement>;

/**
 * What a query about records needs besides its own arguments: where it runs (the pool, or the
 * transaction of a write), the definitions that name tables and links, and the dialect.
 */
export interface SqlContext<TDb extends Connection = Connection> {
  db: TDb;
  schema: SchemaModel;
  dialect: Dialect;
  /** Statements compiled once, by the shape of their query (the database's). */
  statements: StatementShapes;
  /** Where logged changes go besides the log (webhooks); none for a database without it. */
  routing?: ChangeRouting;
}

/** The context of queries on `db` (the pool or a transaction) of an instance's database. */
export function sqlContext<TDb extends Connection>(env: { database: Database; schema: SchemaModel }, db: TDb): SqlContext<TDb> {
  return { db, schema: env.schema, dialect: env.database.dialect, statements: env.database.statements, routing: routingOf(env.database) };
}
