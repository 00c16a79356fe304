import { forbidden, type UserAccess } from '../auth/access-control';
import type { EntityModel, FieldModel, LinkEnd, MultipleLinkField } from '../definition/model';
import { invalidRecord, requiredIssue } from '../definition/validate-record';
import { ApiError } from '../errors';
import { liveIdsOf, OPTION_ENTITY, optionIdsInList, optionListId, type Hold } from '../sql/link-store';
import type { Owner } from '../sql/record-columns';
import type { LinkGuard } from '../sql/record-store';
import type { SqlContext } from '../sql/sql-context';
import { judgedOnOtherSide } from './counterparts';
import type { RowFilter, RowRules } from './row-rules';
import { assertFieldsEditable, assertMay, readOnlyError, type Writer } from './write-rules';

/** The caller of a write whose links are judged: its rights, and the row rules of the link targets. */
export interface LinkWriter extends Writer {
  rows: RowRules;
}

/** A field of a write: a record's, or a link attribute seen as a link (`LinkEnd`). */
type WriteField = FieldModel | LinkEnd;

const isLink = (field: WriteField): field is LinkEnd => field.type === 'link' || field.type === 'linkMultiple';

/** The option list a link is bound to (its options are readable through the field: `_meta.options`). */
export const optionList = (field: LinkEnd): string | undefined => (field.target === OPTION_ENTITY ? field.def.extensibleEnum : undefined);

/** 400 for a link whose option list does not exist. */
export const missingList = (field: LinkEnd, list: string): ApiError =>
  new ApiError('CORE_INVALID_LINK', `Option list '${list}' of ${field.name} does not exist`, { details: { field: field.key, list } });

/** One write's values (the links among them are checked). */
export interface LinkWrite {
  values: ReadonlyMap<WriteField, unknown>;
}

export interface LinkCheckOptions {
  /** Ids that count as valid although not stored yet: records an earlier item of the same batch creates. */
  known?: (field: LinkEnd, id: string) => boolean;
}

/** Valid ids by group: a target entity (`e:Brand`) or an option list (`l:product_status`). */
type Found = Map<string, Set<string> | ApiError>;

const groups = new WeakMap<LinkEnd, string>();

function groupOf(field: LinkEnd): string {
  let group = groups.get(field);
  if (group === undefined) {
    const list = optionList(field);
    groups.set(field, (group = list ? `l:${list}` : `e:${field.target}`));
  }
  return group;
}

/**
 * Which records of a link's target the caller may link to: those of an option list; none (no
 * read rights); or the live records, only the caller's own under `own` and those the target's
 * row rules keep. The one place these rules live: `findValid` reads by them, `linkGuards` lets an
 * insert judge the plainest of them (every live record).
 */
type Linkable = { list: string } | { none: true } | { owner?: Owner; within?: RowFilter };

async function linkableOf(writer: LinkWriter, field: LinkEnd): Promise<Linkable> {
  const list = optionList(field);
  if (list) return { list };
  const level = writer.access.scope(field.target).read;
  if (level === 'no') return { none: true };
  const owner = level === 'own' && writer.ctx.user ? { userId: writer.ctx.user.id } : undefined;
  return { owner, within: await writer.rows(field.target) };
}

/**
 * How a check holds the records a link names until its write commits (`Hold`): as a foreign key
 * does, or, for the records on the other side of a multiple link, which the write changes and
 * locks too (`judgedOnOtherSide`), as that write does.
 */
const holdOf = (sql: SqlContext, field: LinkEnd): Hold => (field.type === 'linkMultiple' && 'linkKind' in field && judgedOnOtherSide(sql.schema, field as MultipleLinkField) ? 'update' : 'share');

/**
 * The ids of each group the caller may link to (`linkableOf`), held until the write commits (see
 * `holdOf`). One query per group, whatever the number of writes.
 */
async function findValid(sql: SqlContext, writer: LinkWriter, wanted: Map<string, { field: LinkEnd; ids: Set<string> }>): Promise<Found> {
  const found: Found = new Map();
  for (const [group, { field, ids }] of wanted) {
    const linkable = await linkableOf(writer, field);
    if ('list' in linkable) {
      const listId = await optionListId(sql, linkable.list);
      found.set(group, listId ? await optionIdsInList(sql, { listId, ids }) : missingList(field, linkable.list));
    } else found.set(group, 'none' in linkable ? new Set() : await liveIdsOf(sql, field.target, { ids, ...linkable, hold: holdOf(sql, field) }));
  }
  return found;
}

/** The error of one link id that is not valid: the same whether the record is missing or hidden from the caller. */
function invalidLink(field: LinkEnd, id: string): ApiError {
  const list = optionList(field);
  if (list) {
    return new ApiError('CORE_INVALID_LINK', `Option '${id}' is not in the list '${list}' of ${field.name}`, { details: { entity: OPTION_ENTITY, field: field.key, ids: [id] } });
  }
  return new ApiError('CORE_INVALID_LINK', `${field.target} '${id}' not found (${field.key})`, { details: { entity: field.target, field: field.key, ids: [id] } });
}

/** The error of one linked id, if it is not valid (`valid`: what was found of its group). */
function invalidId(field: LinkEnd, id: string, { valid, options }: { valid: Set<string> | ApiError | undefined; options: LinkCheckOptions }): ApiError | undefined {
  if (valid instanceof ApiError) return valid;
  return !valid?.has(id) && !options.known?.(field, id) ? invalidLink(field, id) : undefined;
}

/**
 * The first invalid link of one write, in the order of its values. (`forEach` and no list of a
 * single link's one id: a batch judges every item here.)
 */
function firstInvalid(write: LinkWrite, found: Found, options: LinkCheckOptions): ApiError | undefined {
  let error: ApiError | undefined;
  write.values.forEach((value, field) => {
    if (error || !isLink(field) || value === null || value === undefined) return;
    const judged = { valid: found.get(groupOf(field)), options };
    if (!Array.isArray(value)) error = invalidId(field, value as string, judged);
    else for (const id of value as string[]) if ((error = invalidId(field, id, judged))) return;
  });
  return error;
}

/** Judges the links of a write: its first invalid link, or undefined. */
export type LinkCheck = (write: LinkWrite, options?: LinkCheckOptions) => ApiError | undefined;

/**
 * Reads what the link rules need for these writes at once (one query per target entity or option
 * list), and answers a check of each write's links: its first invalid link is an id that names
 * no live record of its target, or one the caller may not read (one answer for both, so that none
 * tells them apart), or an option outside the field's list.
 */
export async function linkCheck(sql: SqlContext, writer: LinkWriter, writes: Iterable<LinkWrite>): Promise<LinkCheck> {
  const wanted = new Map<string, { field: LinkEnd; ids: Set<string> }>();
  for (const write of writes) {
    write.values.forEach((value, field) => {
      if (!isLink(field) || value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return;
      const group = groupOf(field);
      let entry = wanted.get(group);
      if (!entry) wanted.set(group, (entry = { field, ids: new Set() }));
      if (!Array.isArray(value)) entry.ids.add(String(value));
      else for (const id of value) entry.ids.add(String(id));
    });
  }
  const found = wanted.size ? await findValid(sql, writer, wanted) : new Map();
  return (write, options = {}) => firstInvalid(write, found, options);
}

/**
 * The links of one write that its insert can judge itself (`LinkGuard`): single links whose
 * caller may link to every live record of the target (`linkableOf` holds no owner, no row rules,
 * no option list). A guarded insert writes nothing when such a link names no live record;
 * `assertLinks` then says which. Undefined when a link of the write needs more than that.
 */
export async function linkGuards(sql: SqlContext, writer: LinkWriter, values: ReadonlyMap<FieldModel, unknown>): Promise<LinkGuard[] | undefined> {
  const guards: LinkGuard[] = [];
  for (const [field, value] of values) {
    if (!isLink(field) || value === null || value === undefined) continue;
    if (field.type !== 'link') return undefined;
    const linkable = await linkableOf(writer, field);
    if ('list' in linkable || 'none' in linkable || linkable.owner || linkable.within) return undefined;
    guards.push({ column: field.column, table: sql.schema.entity(field.target)!.table });
  }
  return guards;
}

/** 400 `CORE_INVALID_LINK` for the first invalid link of one write (see `invalidLinks`). */
export async function assertLinks(sql: SqlContext, writer: LinkWriter, values: ReadonlyMap<WriteField, unknown>): Promise<void> {
  const write = { values };
  const error = (await linkCheck(sql, writer, [write]))(write);
  if (error) throw error;
}

/** The single link of the other side that holds a `hasMany` owner's id (`Product.brand` of `Brand.products`). */
export function holdingLink(target: EntityModel, field: MultipleLinkField): FieldModel | undefined {
  return field.linkKind === 'hasMany' ? target.fields.find((f) => f.type === 'link' && f.column === field.foreignColumn) : undefined;
}

/**
 * The rules of the single link a one-to-many list writes (`holding`, `Product.brand` of
 * `Brand.products`): it sets the link of the records the list adds and clears that of those it
 * removes, so, as a write of those records would, the caller must be allowed to edit it (403), it
 * may not be read-only (400) nor, when records are removed, required (400: left empty).
 */
export function assertHoldingWritable(access: UserAccess, { target, holding, removes }: { target: EntityModel; holding: FieldModel; removes: boolean }): void {
  assertFieldsEditable(target, access, [holding]);
  if (holding.def.readOnly) throw readOnlyError(holding);
  if (removes && holding.def.required) throw invalidRecord(target, [requiredIssue(holding)]);
}

/**
 * The rules on the other side of a multiple link (CONTRACT §15). A record a write removes from
 * the link must be one the caller may read, else the same 400 as a link to a missing record (a
 * record it adds is judged as a link target already). A link whose write changes the records it
 * adds and removes (`judgedOnOtherSide`) is judged further, as a write of those records: no route
 * may change a record that another route would refuse to change. `Brand.products` writes the
 * `brand` of the products it adds and removes; a pair of `Category.products` is in each
 * product's `categories` too. The caller must be allowed to edit the type (403), such a single
 * link (403) and each record added or removed, at the role's level for its type (403: under
 * `own`, another user's record). Judged on the ids the write adds and removes: those of `ids`
 * not in `previous` (the list as stored; none for a new record), and the other way round.
 */
export async function assertOtherSide(
  sql: SqlContext,
  writer: LinkWriter,
  { field, previous = [], ids }: { field: MultipleLinkField; previous?: readonly string[]; ids: readonly string[] },
): Promise<void> {
  const added = ids.filter((id) => !previous.includes(id));
  const removed = previous.filter((id) => !ids.includes(id));
  if (added.length === 0 && removed.length === 0) return;
  if (!judgedOnOtherSide(sql.schema, field)) return assertRemovable(sql, writer, { field, removed });
  const target = sql.schema.entity(field.target) as EntityModel;
  // The right on the type first, as the field rules of the write judge it (`assertOtherSidesEditable`).
  const level = assertMay(target, writer.access, 'edit');
  const holding = holdingLink(target, field);
  if (holding) assertHoldingWritable(writer.access, { target, holding, removes: removed.length > 0 });
  /** The first of `ids` that `allowed` lacks and is live (a link to a record deleted since is no record's: nothing to judge). */
  const firstOutside = async (ids: readonly string[], allowed: ReadonlySet<string>) => {
    const missing = ids.filter((id) => !allowed.has(id));
    const live = missing.length ? await liveIdsOf(sql, field.target, { ids: missing }) : new Set<string>();
    return missing.find((id) => live.has(id));
  };
  await assertRemovable(sql, writer, { field, removed });
  if (level.edit === 'own') {
    const changed = [...added, ...removed];
    const owner = { userId: writer.ctx.user?.id ?? '' };
    const editable = await liveIdsOf(sql, field.target, { ids: changed, owner, within: await writer.rows(field.target) });
    if ((await firstOutside(changed, editable)) !== undefined) throw forbidden(`Not allowed to edit this ${target.name}`);
  }
}

/**
 * Of some ids of a link's target type, those the caller may read (`own`, row rules, no read);
 * undefined when it reads every record of the type.
 */
async function readableOf(sql: SqlContext, writer: LinkWriter, { field, ids }: { field: MultipleLinkField; ids: readonly string[] }): Promise<Set<string> | undefined> {
  if (writer.access.unrestricted) return undefined;
  const level = writer.access.scope(field.target).read;
  const within = await writer.rows(field.target);
  if (level === 'all' && !within) return undefined;
  if (level === 'no') return new Set();
  return liveIdsOf(sql, field.target, { ids, owner: level === 'own' ? { userId: writer.ctx.user?.id ?? '' } : undefined, within });
}

/**
 * Of some linked ids, the live records the caller may not read: a many-to-many pair naming one is
 * the other record's too, which the caller could not change from its side.
 */
export async function unreadableLinked(sql: SqlContext, writer: LinkWriter, { field, ids }: { field: MultipleLinkField; ids: readonly string[] }): Promise<Set<string>> {
  const readable = ids.length ? await readableOf(sql, writer, { field, ids }) : undefined;
  const missing = readable ? ids.filter((id) => !readable.has(id)) : [];
  return missing.length ? await liveIdsOf(sql, field.target, { ids: missing }) : new Set();
}

/** Of the lists `fields` of `records`, by field, the linked records the caller may not read (see `unreadableLinked`). */
export async function unreadablePairs(sql: SqlContext, writer: LinkWriter, { fields, records }: { fields: readonly MultipleLinkField[]; records: readonly Record<string, unknown>[] }): Promise<Map<MultipleLinkField, Set<string>>> {
  const unreadable = new Map<MultipleLinkField, Set<string>>();
  for (const field of fields) {
    const ids = [...new Set(records.flatMap((r) => (r[field.key] as string[] | undefined) ?? []))];
    unreadable.set(field, await unreadableLinked(sql, writer, { field, ids }));
  }
  return unreadable;
}

/**
 * A many-to-many pair a write removes must name a record the caller may read, else the same 400
 * as a link to a missing record (CONTRACT §15). Adding a pair is judged as a link target.
 */
export function assertNotRemoving(field: LinkEnd, { removed, unreadable }: { removed: readonly string[]; unreadable: ReadonlySet<string> }): void {
  const hidden = removed.find((id) => unreadable.has(id));
  if (hidden !== undefined) throw invalidLink(field, hidden);
}

async function assertRemovable(sql: SqlContext, writer: LinkWriter, { field, removed }: { field: MultipleLinkField; removed: readonly string[] }): Promise<void> {
  assertNotRemoving(field, { removed, unreadable: await unreadableLinked(sql, writer, { field, ids: removed }) });
}

/**
 * What the link rules judge of a write to a stored record: the links it makes, not those the
 * record holds already (a caller may send back a list it read, with ids it could not link anew).
 */
export function linksMade<TField extends WriteField>(existing: Record<string, unknown>, values: Iterable<[TField, unknown]>): Map<TField, unknown> {
  const made = new Map<TField, unknown>();
  for (const [field, value] of values) {
    if (field.type === 'linkMultiple' && Array.isArray(value)) {
      const held = new Set((existing[field.key] as string[] | null | undefined) ?? []);
      made.set(field, value.filter((id) => !held.has(id as string)));
    } else if (!(field.type === 'link' && typeof value === 'string' && value === existing[field.key])) {
      made.set(field, value);
    }
  }
  return made;
}

/**
 * The list a write of a multiple link stores: the ids sent, and of a one-to-many list
 * (`Brand.products`) the records it holds that the caller may not read, which a write from a
 * partial view of it (`linkScopes`: under `own`, row rules) keeps, as it could neither see nor
 * name them.
 */
export async function withHiddenLinked(sql: SqlContext, writer: LinkWriter, { field, previous, sent }: { field: MultipleLinkField; previous: readonly string[]; sent: readonly string[] }): Promise<string[]> {
  if (field.linkKind !== 'hasMany' || previous.length === 0) return [...sent];
  const readable = await readableOf(sql, writer, { field, ids: previous });
  return readable ? [...sent, ...previous.filter((id) => !readable.has(id) && !sent.includes(id))] : [...sent];
}
