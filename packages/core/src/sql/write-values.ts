import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { FieldModel } from '../definition/normalize';
import { ApiError } from '../errors';
import { nowDateTime } from '../time';
import type { Dialect } from './dialects/dialect';
import { equalValues, sameValue } from './record-guard';
import type { Repository } from './repository';

/** Keys whose value before-hooks put into (or changed in) the body. */
export function keysSetByHooks(sent: Record<string, unknown>, input: Record<string, unknown>): ReadonlySet<string> {
  return new Set(Object.keys(input).filter((key) => !Object.is(sent[key], input[key])));
}

/** The columns every change sets: when, by whom, and in a delegated session through whom. */
export function modifiedBy(ctx: RequestContext): Record<string, unknown> {
  return { modified_at: nowDateTime(), modified_by_id: ctx.user?.id ?? null, modified_by_actor_id: ctx.actor?.id ?? null };
}

/** Splits validated values into stored columns and multiple links. */
export function toRow(dialect: Dialect, values: Map<FieldModel, unknown>): { row: Record<string, unknown>; links: [FieldModel, string[]][] } {
  const row: Record<string, unknown> = {};
  const links: [FieldModel, string[]][] = [];
  for (const [field, value] of values) {
    if (field.type === 'linkMultiple') links.push([field, [...new Set(value as string[])]]);
    else row[field.column as string] = dialect.toDb(field.type, value);
  }
  return { row, links };
}

/**
 * Read-only fields may be sent back unchanged, never changed, except those a before-hook set
 * (`fromHooks`): a plugin fills in values it computed (a file's hash).
 */
export function assertWritable(values: Map<FieldModel, unknown>, existing: ApiRecord | undefined, fromHooks?: ReadonlySet<string>): void {
  for (const [field, value] of values) {
    if (!field.def.readOnly || fromHooks?.has(field.key)) continue;
    if (existing && sameValue(field, existing[field.key], value)) {
      values.delete(field);
      continue;
    }
    if (!existing && equalValues(field, field.def.default, value)) continue;
    throw new ApiError('CORE_READ_ONLY_FIELD', `${field.key} is read-only`, {
      details: { issues: [{ path: [field.key], code: 'read_only', message: `${field.key} is read-only` }] },
    });
  }
}

/** The column conditions of a hook's `expect` (record keys of stored fields only). */
export function expectedColumns(repo: Repository, expect: Record<string, unknown> | undefined): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(expect ?? {})) {
    const field = repo.model.byKey.get(key);
    if (!field?.column) throw new ApiError('CORE_INTERNAL', `expect names '${key}', which is not a stored field of ${repo.model.name}`);
    columns[field.column] = repo.env.database.dialect.toDb(field.type, value);
  }
  return columns;
}
