import { forbidden, type ScopeAccess, type UserAccess } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel } from '../definition/normalize';
import { ApiError } from '../errors';
import { counterpartOf, oneToManyReach, otherSideType, type Counterpart } from './counterparts';
import { splitLinkObjects } from './link-objects';
import type { Repository } from './repository';
import { equalValues, sameValue } from './values';

/**
 * The rules every write obeys (CONTRACT §15), whatever route it takes. Create, update, both upsert
 * paths and their jobs, mass updates, restore, delete, link routes, find-or-create and attribute
 * writes all judge a write with these functions (and the link rules of `link-rules.ts`), in the
 * order `checkWrite` gives, so that a rule answers the same on every route.
 */

export type WriteAction = 'create' | 'edit' | 'delete';

/** The caller of a write: its context and its rights, resolved once. */
export interface Writer {
  ctx: RequestContext;
  access: UserAccess;
}

/** 403 when the role may not do `action` to records of this entity type at all. */
export function assertMay(model: EntityModel, access: UserAccess, action: WriteAction | 'read'): ScopeAccess {
  if (action === 'create' && (model.def.serverCreated || model.def.serverWritten) && access.user) throw forbidden(`${model.name} records are made by the server, not created through the API`);
  if (action !== 'create' && action !== 'read' && model.def.serverWritten && access.user) throw forbidden(`${model.name} records are written by the server only`);
  const scope = access.scope(model.name);
  if (action === 'create' ? !scope.create : scope[action] === 'no') throw forbidden(`Not allowed to ${action} ${model.name}`);
  return scope;
}

/** 400 for an id a create sends for an entity type whose ids the server chooses (`serverIds`). */
export function assertClientMayChooseId(model: EntityModel, id: unknown): void {
  if (!model.def.serverIds || id === undefined || id === null) return;
  const message = `The server chooses the id of a ${model.name}`;
  throw new ApiError('CORE_READ_ONLY_FIELD', message, { details: { issues: [{ path: ['id'], code: 'read_only', message }] } });
}

/** Whether the record belongs to the caller: created by them, or assigned to them. */
export function isOwn(ctx: RequestContext, record: ApiRecord | Record<string, unknown>): boolean {
  const id = ctx.user?.id;
  return !!id && (record.createdById === id || record.assignedUserId === id);
}

/** 403 when the role's level for `action` does not reach this record (`own`: only the caller's). */
export function assertRecordLevel(model: EntityModel, writer: Writer, { record, action }: { record: ApiRecord | Record<string, unknown>; action: WriteAction }): void {
  const level = writer.access.scope(model.name)[action === 'create' ? 'edit' : action];
  if (level === 'own' && !isOwn(writer.ctx, record)) throw forbidden(`Not allowed to ${action} this ${model.name}`);
}

/**
 * 403 for the first of `fields` the role may not edit. Decided on the fields a write names alone,
 * never by comparing with the stored value: no answer depends on a value the caller cannot read.
 * A link is editable only where the field of its other side is readable and editable too (in a
 * type the role reads): both state one relation (`counterparts.ts`).
 */
export function assertFieldsEditable(model: EntityModel, access: UserAccess, fields: Iterable<FieldModel>): void {
  if (access.unrestricted) return;
  for (const field of fields) {
    if (!access.field(model.name, field.name).edit || oneToManyReach(access, field) === 'no') throw forbidden(`Not allowed to edit ${model.name}.${field.name}`);
    const other = lockedOtherSide(model, access, field);
    if (other) throw forbidden(`Not allowed to edit ${other.entity}.${other.field}`);
  }
}

/**
 * The other side of a link, when a field right of the role locks it (`read: false` or `edit:
 * false` on that field, in a type the role reads). Rights on the other entity type itself do not
 * count: linking a product to a brand needs no right to edit brands.
 */
function lockedOtherSide(model: EntityModel, access: UserAccess, field: FieldModel): Counterpart | undefined {
  const other = counterpartOf(undefined, model, field);
  if (!other || access.scope(other.entity).read === 'no') return undefined;
  const rule = access.fieldRule(other.entity, other.field);
  return rule.read && rule.edit ? undefined : other;
}

/**
 * 403 when a write of a multiple link would change records of a type the role may not edit at all
 * (`Not allowed to edit Product`): `Brand.products` writes the `brand` of the products it adds and
 * removes, and a pair of `Category.products` is in each product's `categories` too. Judged with
 * the field rights, before any link target is read, on the lists the write changes (`changes`: a
 * list sent back as stored changes no other record; a mass update judges each record so, as an
 * update of it does). Which records the role may change under `own` is judged on the records
 * themselves (`assertOtherSide`).
 */
function assertOtherSidesEditable(model: EntityModel, access: UserAccess, { fields, changes }: { fields: Iterable<FieldModel>; changes: (field: FieldModel) => boolean }): void {
  for (const field of fields) {
    const other = otherSideType(model, field);
    if (!other) continue;
    try {
      assertMay(other, access, 'edit');
    } catch (error) {
      // Compared only when refused: a write the type allows costs no comparison.
      if (changes(field)) throw error;
    }
  }
}

/**
 * Whether the ids a write sends for a multiple link differ from those the record holds (all of
 * them for a new record). A list of link objects alone is judged once they are found or created.
 */
function changesList(sent: unknown, held: unknown): boolean {
  if (!Array.isArray(sent)) return false;
  const before = new Set(Array.isArray(held) ? (held as unknown[]) : []);
  const after = new Set(sent as unknown[]);
  if (after.size !== before.size) return true;
  for (const id of after) if (!before.has(id)) return true;
  return false;
}

/**
 * 403 when an upsert would look a record up by a field the caller may not read: whether it finds
 * one would tell the hidden value.
 */
export function assertLookupReadable(model: EntityModel, access: UserAccess, fields: Iterable<FieldModel>): void {
  if (access.unrestricted) return;
  for (const field of fields) {
    if (!field.system && !access.field(model.name, field.name).read) throw forbidden(`Not allowed to look up ${model.name} by ${field.name}`);
  }
}

/** The 400 of a write that changes a read-only field. */
export const readOnlyError = (field: FieldModel) =>
  new ApiError('CORE_READ_ONLY_FIELD', `${field.key} is read-only`, {
    details: { issues: [{ path: [field.key], code: 'read_only', message: `${field.key} is read-only` }] },
  });

/**
 * Read-only fields may be sent back unchanged (they are dropped from the write), never changed,
 * except those a before-hook set (`fromHooks`: a plugin fills in values it computed, a file's
 * hash). A create may repeat the default.
 */
export function keepReadOnly(values: Map<FieldModel, unknown>, { existing, fromHooks }: { existing?: ApiRecord | Record<string, unknown>; fromHooks?: ReadonlySet<string> }): void {
  // forEach makes no entry array per value (a batch judges every field of every item here).
  values.forEach((value, field) => {
    if (!field.def.readOnly || fromHooks?.has(field.key)) return;
    if (existing && sameValue(field, existing[field.key], value)) values.delete(field);
    else if (existing || !equalValues(field, field.def.default, value)) throw readOnlyError(field);
  });
}

/** The fields of a write as the client sent them: what the edit rights are checked on (not defaults, not what hooks added). */
export function sentFields(values: ReadonlyMap<FieldModel, unknown>, { sent, objects }: { sent: Record<string, unknown>; objects?: Iterable<FieldModel> }): FieldModel[] {
  const fields = [...values.keys()].filter((f) => Object.hasOwn(sent, f.key));
  for (const field of objects ?? []) if (!fields.includes(field)) fields.push(field);
  return fields;
}

/**
 * The rules of a body as the client sent it that a create or an update judges before its
 * before-hooks run: its shape, types and unknown keys (400), then the edit right of each field it
 * names (403). Upserts and mass updates judge a body so before any hook, so a hook's own refusal
 * (a format it checks, a link it reads) must not answer first on `POST`, `PATCH` or a link route
 * either (CONTRACT §15: one outcome on every route). Required values are judged after the hooks,
 * which may fill them.
 */
export function assertSentBody(repo: Repository, access: UserAccess, sent: Record<string, unknown>): void {
  const { data, objects } = splitLinkObjects(repo.model, sent);
  const values = repo.validate(data, 'update');
  assertFieldsEditable(repo.model, access, sentFields(values, { sent, objects: objects.keys() }));
}

/**
 * The field rules of one write, in their one order: the edit right of every field the client
 * sent (403) and of the entity types whose records its multiple links change (403), then
 * read-only fields (400).
 */
export function checkFields(
  model: EntityModel,
  access: UserAccess,
  write: { values: Map<FieldModel, unknown>; sent: readonly FieldModel[]; existing?: ApiRecord | Record<string, unknown>; fromHooks?: ReadonlySet<string> },
): void {
  assertFieldsEditable(model, access, write.sent);
  assertOtherSidesEditable(model, access, { fields: write.sent, changes: (field) => changesList(write.values.get(field), write.existing?.[field.key]) });
  // A field sent as link objects (find-or-create) is not among the values yet: it names records
  // to find or create, which a read-only link takes from no client.
  const objects = write.sent.find((f) => f.def.readOnly && !write.values.has(f) && !write.fromHooks?.has(f.key));
  if (objects) throw readOnlyError(objects);
  keepReadOnly(write.values, write);
}
