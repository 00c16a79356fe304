import type { UserAccess } from '../../auth/access-control';
import type { EntityModel, FieldModel } from '../../definition/normalize';
import { ApiError, notFound } from '../../errors';
import { assertLookupReadable, assertMay, assertRecordLevel, isOwn, type Writer } from '../write-rules';
import { lookupFields, uniqueViolation, type Hit, type UpsertMode } from './plan';

/**
 * The rules of an upsert item that both upsert paths (single-record and set-based) apply before
 * the rules of the create or update it turns into, so that an item fails alike on both.
 */

export const ambiguousLookup = (): ApiError => new ApiError('CORE_CONFLICT', 'The unique fields of the payload point at different records');

/** 403 when the item would look its record up by a field the caller may not read (CONTRACT §15). */
export function assertLookup(model: EntityModel, access: UserAccess, item: { id?: string; values: ReadonlyMap<FieldModel, unknown> }): void {
  assertLookupReadable(model, access, lookupFields(model, item));
}

/**
 * Whether the caller can see the record an item found: a record outside its read level (`own`,
 * `no`) is not found. The item is then judged as the create it would be, whose rules come first,
 * and collides with the hidden record as a create with the same key would (in update mode, a mass
 * update: what an update of it answers, `assertHiddenHit`). No answer tells more than a create
 * would.
 */
export function seesHit(model: EntityModel, writer: Writer, hit: Hit): boolean {
  const { read } = writer.access.scope(model.name);
  return read === 'all' || (read === 'own' && isOwn(writer.ctx, hit.state.record));
}

/** A mass update's item naming no record: what an update of it answers (403 without read on the type, else 404). */
export function missingRecord(model: EntityModel, access: UserAccess, id: string | undefined): ApiError {
  assertMay(model, access, 'read');
  return notFound(model.name, id ?? '');
}

/**
 * For a mass update's item naming a record the caller cannot see, what an update of it answers:
 * 403 without read on the type, else 404. Nothing for an upsert's item (judged as a create).
 */
export function assertHiddenHit(model: EntityModel, access: UserAccess, { hit, mode }: { hit: Hit; mode: UpsertMode }): void {
  if (mode !== 'update') return;
  assertMay(model, access, 'read');
  throw notFound(model.name, hit.state.id);
}

/** The record an item found and sees, as the caller may change it: 403 without the right to edit it. */
export function assertMayChange(model: EntityModel, writer: Writer, hit: Hit): void {
  assertMay(model, writer.access, 'edit');
  assertRecordLevel(model, writer, { record: hit.state.record, action: 'edit' });
}

/** The collision of a create with a record the caller cannot see (after the create's own rules). */
export const hiddenCollision = (model: EntityModel, hit: Hit): ApiError => uniqueViolation(model, hit.key);
