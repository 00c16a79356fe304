import type { EntityModel, FieldModel } from '../definition/model';
import type { Transaction } from '../sql/database';
import { OPTION_ENTITY, optionCodesLike } from '../sql/link-store';
import type { SqlContext } from '../sql/sql-context';
import type { Repository } from './repository';

/** The longest option code (the column's length). */
const MAX_CODE = 100;

const hasValue = (v: unknown) => v !== undefined && v !== null && v !== '';

/** Whether a create may leave out this field, whose value is then derived: an option's `code`. */
export const derivedOnCreate = (model: EntityModel, field: FieldModel): boolean => model.name === OPTION_ENTITY && field.key === 'code';

/** Whether a create body of this entity type gets a value derived for it: an option without `code`. */
export const derivesCode = (repo: Repository, body: Record<string, unknown>): boolean => repo.model.name === OPTION_ENTITY && !hasValue(body.code);

/** `Green Apple!` → `green_apple_`: lower case, every run of other characters than a-z and 0-9 one `_`. */
export const codeFromName = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '_');

/**
 * An option created without a code gets one derived from its name, made unique in its list with
 * `_2`, `_3`, … (CONTRACT §15). Writers deriving the same code take turns (a lock held until
 * their transaction ends), so two of them never pick the same one.
 */
export async function deriveOptionCode(repo: Repository, { sql, trx, body }: { sql: SqlContext; trx: Transaction; body: Record<string, unknown> }): Promise<void> {
  const { name, extensibleEnumId: listId } = body;
  if (!derivesCode(repo, body) || typeof name !== 'string' || name === '' || typeof listId !== 'string') return;
  const base = codeFromName(name).slice(0, MAX_CODE);
  await sql.dialect.lock(trx, [`option-code:${listId}:${base}`]);
  const taken = await optionCodesLike(sql, { listId, base });
  let code = base;
  for (let n = 2; taken.has(code); n++) code = `${base.slice(0, MAX_CODE - String(n).length - 1)}_${n}`;
  body.code = code;
}
