import type { RequestContext } from '../context';
import type { FieldModel } from '../definition/model';
import type { ChangeAction, NewChange } from '../sql/change-store';
import type { DetachedRecord, MovedLinks } from '../sql/link-store';
import { nowDateTime } from '../time';

/** `{field: {was, became}}`: what one write changed of one record (multiple links as id sets). */
export type Diff = Record<string, { was: unknown; became: unknown }>;

/** Whose a record is: what a reader's `own` level is judged by. */
export interface Ownership {
  ownerId: string | null;
  assigneeId: string | null;
}

/** The ownership of a record as read or written (its `createdById` and `assignedUserId`). */
export const ownershipOf = (record: Record<string, unknown>): Ownership => ({
  ownerId: (record.createdById as string | null | undefined) ?? null,
  assigneeId: (record.assignedUserId as string | null | undefined) ?? null,
});

/** Fields a change never shows: system fields (its own columns say who and when) and write-only ones. */
export const isLogged = (field: FieldModel) => !field.system && !field.def.writeOnly;

/** A field's value before anything was written: a multiple link is an id set, the empty one; any other field null. */
const nothingOf = (field: FieldModel): unknown => (field.type === 'linkMultiple' ? [] : null);

/**
 * The diff of writing `values` over `before` (a create: over nothing); only the values that
 * differ go in. A multiple link was the empty set where nothing held it (CONTRACT §16: id sets).
 */
export function diffOf(values: ReadonlyMap<FieldModel, unknown>, before?: Record<string, unknown>): Diff {
  const diff: Diff = {};
  for (const [field, value] of values) {
    if (!isLogged(field)) continue;
    diff[field.key] = { was: before?.[field.key] ?? nothingOf(field), became: value ?? nothingOf(field) };
  }
  return diff;
}

/** What an item of a batch changed: its diff, or, for an item that created a record, the values it created it with. */
export const itemDiff = (item: { diff?: Diff; created?: ReadonlyMap<FieldModel, unknown> }): Diff => item.diff ?? (item.created ? diffOf(item.created) : {});

/**
 * The diff of two writes of one record, one after the other: each field's value before the first
 * write that set it, and after the last; a field that ends as it was drops out (a created
 * record's fields all stay: they were nothing before).
 */
export function mergedDiff(first: Diff, second: Diff, { created }: { created: boolean }): Diff {
  const merged: Diff = { ...first };
  for (const [key, { became }] of Object.entries(second)) merged[key] = { was: key in first ? first[key].was : second[key].was, became };
  if (created) return merged;
  for (const key of Object.keys(second)) {
    const { was, became } = merged[key];
    if (JSON.stringify(was) === JSON.stringify(became)) delete merged[key];
  }
  return merged;
}

/** A change of one record by the caller of a write, made `at` (default: now). */
export function changeOf(ctx: RequestContext, change: { entityType: string; recordId: string; action: ChangeAction; diff: Diff; owner: Ownership; at?: string }): NewChange {
  return {
    entityType: change.entityType,
    recordId: change.recordId,
    action: change.action,
    diff: change.diff,
    userId: ctx.user?.id ?? null,
    actorId: ctx.actor?.id ?? null,
    requestId: ctx.requestId ?? null,
    ownerId: change.owner.ownerId,
    assigneeId: change.owner.assigneeId,
    createdAt: change.at ?? nowDateTime(),
  };
}

/**
 * The changes of the other records a write of a link changed: those a one-to-many link moved
 * (`Brand.products` sets each product's `brandId`: `Relate` for those it now points at, `Unrelate`
 * for those it left), and those of the other side of a many-to-many link (`Product.categories`
 * changes each category's `productsIds`).
 */
export function movedLinkChanges(ctx: RequestContext, moves: MovedLinks | undefined): NewChange[] {
  if (!moves) return [];
  return moves.moved.map(({ id, was, became, action, ownerId, assigneeId }) =>
    changeOf(ctx, { entityType: moves.entityType, recordId: id, action: action ?? (became === null ? 'Unrelate' : 'Relate'), diff: { [moves.key]: { was, became } }, owner: { ownerId, assigneeId }, at: moves.at }),
  );
}

/**
 * The changes of the records a permanent delete detached from the removed record: one `Unrelate`
 * each, of every link field and link value that named it (a single link cleared, a multiple
 * link's id set without it), at the time of the delete (`at`, the modification they recorded).
 */
export function detachedChanges(ctx: RequestContext, detached: readonly DetachedRecord[], at: string): NewChange[] {
  return detached.map(({ entityType, id, action, diff, ownerId, assigneeId }) => changeOf(ctx, { entityType, recordId: id, action, diff, owner: { ownerId, assigneeId }, at }));
}
