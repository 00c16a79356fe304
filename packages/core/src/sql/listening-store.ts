import type { EntityModel } from '../definition/model';
import { VERSION_COLUMN, type AuxiliaryTable } from './schema-sync';
import type { SqlContext } from './sql-context';

/**
 * Who listens to which record (AtroCore's realtime): one row per record with the last time someone
 * started listening, in ms. Shared by every process of the database.
 */
export const LISTENING_TABLE: AuxiliaryTable = {
  name: 'record_listening',
  columns: {
    entity_type: 'varchar(64) not null',
    record_id: 'varchar(64) not null',
    listened_at: 'bigint not null',
  },
  primaryKey: ['entity_type', 'record_id'],
};

/** Notes that someone listens to a record now. */
export async function startListening(sql: SqlContext, { entityType, recordId, at }: { entityType: string; recordId: string; at: number }): Promise<void> {
  await sql.db(LISTENING_TABLE.name).insert({ entity_type: entityType, record_id: recordId, listened_at: at }).onConflict(['entity_type', 'record_id']).merge(['listened_at']);
}

/** When someone last started listening to a record (ms), or undefined. */
export async function listenedAt(sql: SqlContext, { entityType, recordId }: { entityType: string; recordId: string }): Promise<number | undefined> {
  const row = await sql.db(LISTENING_TABLE.name).first('listened_at').where({ entity_type: entityType, record_id: recordId });
  return row ? Number(row.listened_at) : undefined;
}

/** Forgets listening older than `before` (ms); answers how many. */
export async function forgetListening(sql: SqlContext, before: number): Promise<number> {
  return sql.db(LISTENING_TABLE.name).where('listened_at', '<', before).delete();
}

/** When a record was last modified (`YYYY-MM-DD HH:MM:SS`) and its version, in the bin or not; undefined without a row. */
export async function lastWriteOf(sql: SqlContext, { model, id }: { model: EntityModel; id: string }): Promise<{ modifiedAt: string | null; version: number } | undefined> {
  const row = (await sql.db(model.table).first({ modifiedAt: 'modified_at', version: VERSION_COLUMN }).where({ id })) as { modifiedAt: string | null; version: number | string } | undefined;
  return row && { modifiedAt: row.modifiedAt, version: Number(row.version) };
}
