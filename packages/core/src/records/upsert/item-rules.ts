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
 * The record an item found, as the caller may change it: 403 without the right to read or edit
 * it. A record the caller cannot see (`own`) is not found: the item collides with it, as a create
 * with the same key would (in update mode, a mass update: 404, as an update of it would be).
 */
export function assertMayChange(model: EntityModel, writer: Writer, { hit, mode }: { hit: Hit; mode: UpsertMode }): void {
  const scope = assertMay(model, writer.access, 'read');
  if (scope.read === 'own' && !isOwn(writer.ctx, hit.state.record)) throw mode === 'update' ? notFound(model.name, hit.state.id) : uniqueViolation(model, hit.key);
  assertMay(model, writer.access, 'edit');
  assertRecordLevel(model, writer, { record: hit.state.record, action: 'edit' });
}
