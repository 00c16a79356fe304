import type { Knex } from 'knex';
import type { FieldType } from '../declarations';
import type { EntityModel, StoredField } from '../definition/model';
import { afterLogged, diffEntryParts, jsonTextOf, logWrittenRows, MAX_BUILT_FIELDS, type NewChange, type ReadBack, type RowWritten } from './change-store';
import type { ChangeKind } from './change-routing';
import { quoteName as q } from './dialects/shared';
import { prepareStatement, runPrepared, type Param } from './prepared';
import { VERSION_COLUMN } from './schema-sync';
import type { SqlContext } from './sql-context';

/** An update of one record that the database compares with the stored row (see `updateCompared`). */
export interface ComparedUpdate {
  id: string;
  /** The fields set and their new values, in the model's order (the order of a diff). */
  values: ReadonlyMap<StoredField, unknown>;
  /** `modified_at`, `modified_by_id` and `modified_by_actor_id` of the row. */
  modified: Record<string, unknown>;
  /** Who changes the record, when, in which request. */
  caller: Pick<NewChange, 'userId' | 'actorId' | 'requestId' | 'createdAt'>;
  /** The answer, read by the same statement. */
  readBack?: ReadBack;
}

/**
 * An update that compares in the database, in one statement: it reads the stored row (`o`), sets
 * the fields where one of them differs and the row is still at the version read, and logs the
 * `Update` change with a diff the database makes of the two rows, of the fields that differ, in
 * the order given: `{"field": {"was": <o>, "became": <w>}}`. The process reads nothing first.
 *
 * Undefined where the database cannot (no writable CTE: SQLite), a field's column is not turned
 * into JSON as the API shows it (`Dialect.jsonAsShown`), or an active webhook wants the change
 * (its delivery is inserted with it, by `insertChanges`). Not written (`written: false`) when the
 * record is missing, equal in every field, or written by another request meanwhile: the caller
 * then updates the usual way, which tells these apart.
 */
export async function updateCompared(sql: SqlContext<Knex>, model: EntityModel, update: ComparedUpdate): Promise<RowWritten | undefined> {
  const { dialect, db } = sql;
  const fields = [...update.values.keys()];
  if (!dialect.writableCte || fields.length === 0 || fields.length > MAX_BUILT_FIELDS) return undefined;
  if (!fields.every((f) => dialect.jsonAsShown.has(f.type as FieldType))) return undefined;
  const kind: ChangeKind = { entityType: model.name, action: 'Update' };
  if (await sql.routing?.targets(db, [kind])) return undefined;
  const { readBack } = update;
  const key = `updateCompared:${model.table}:${fields.map((f) => f.column).join(',')}${readBack ? `>${readBack.key}` : ''}`;
  const statement = sql.statements.get(key, () => prepareStatement('rows', (param) => comparedStatement(sql, model, { fields, param, readBack })));
  const values: Record<string, unknown> = { id: update.id, ...update.modified, ...callerValues(update.caller) };
  update.values.forEach((value, field) => (values[`set:${field.column}`] = dialect.toDb(field.type, value)));
  const rows = await runPrepared<Record<string, unknown>[]>(sql, statement, values);
  const written = rows.length > 0;
  if (written) afterLogged(sql, kind);
  return { written, read: readBack && rows };
}

const callerValues = (caller: ComparedUpdate['caller']) => ({
  'change:user_id': caller.userId,
  'change:actor_id': caller.actorId,
  'change:request_id': caller.requestId,
  'change:created_at': caller.createdAt,
});

/** The column `o` read a field's stored value into (the update answers it beside the new row). */
const wasColumn = (f: StoredField) => q(`was:${f.column}`);

/** The diff of the fields that differ, as JSON text made by the database (`concat_ws` leaves out the others). */
function diffOfRows(fields: readonly StoredField[]): string {
  const entries = fields.map((f) => {
    const [was, became] = [`w.${wasColumn(f)}`, `w.${q(f.column)}`];
    return `case when ${was} is distinct from ${became} then ${jsonTextOf(diffEntryParts(f.key, was, became))} end`;
  });
  return `'{' || concat_ws(',', ${entries.join(', ')}) || '}'`;
}

/**
 * `with o as (<the stored row>), w as (<the update where a field differs, at o's version>), c as
 * (<the change>) <the read back, or the id>`: the text of `updateCompared`, compiled once per table,
 * set of fields and read.
 */
function comparedStatement(sql: SqlContext, model: EntityModel, { fields, param, readBack }: { fields: readonly StoredField[]; param: Param; readBack?: ReadBack }): Knex.Raw {
  const { live } = sql.dialect;
  const t = q(model.table);
  const version = q(VERSION_COLUMN);
  const set = (f: StoredField) => param(`set:${f.column}`);
  const stored = `select "id", ${version}, ${fields.map((f) => q(f.column)).join(', ')} from ${t} where "id" = ? and "deleted" = ?`;
  const assignments = [...fields.map((f) => `${q(f.column)} = ?`), '"modified_at" = ?', '"modified_by_id" = ?', '"modified_by_actor_id" = ?', `${version} = t.${version} + 1`];
  const update =
    `update ${t} as t set ${assignments.join(', ')} from o ` +
    `where t."id" = o."id" and t.${version} = o.${version} and t."deleted" = ? and (${fields.map((f) => `t.${q(f.column)} is distinct from ?`).join(' or ')}) ` +
    `returning t.*, ${fields.map((f) => `o.${q(f.column)} as ${wasColumn(f)}`).join(', ')}`;
  const log = logWrittenRows(model, { source: 'w', diff: diffOfRows(fields) });
  const bindings = [
    param('id'),
    live,
    ...fields.map(set),
    param('modified_at'),
    param('modified_by_id'),
    param('modified_by_actor_id'),
    live,
    ...fields.map(set),
    model.name,
    'Update',
    ...['user_id', 'actor_id', 'request_id', 'created_at'].map((c) => param(`change:${c}`)),
  ] as Knex.RawBinding[];
  const read = readBack?.select(param, 'w').toSQL() ?? { sql: 'select "id" from w', bindings: [] };
  return sql.db.raw(`with o as (${stored}), w as (${update}), c as (${log}) ${read.sql}`, [...bindings, ...read.bindings] as Knex.RawBinding[]);
}
