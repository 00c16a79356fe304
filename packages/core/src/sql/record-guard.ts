import type { Knex } from 'knex';
import { forbidden, type ScopeAccess, type UserAccess } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel } from '../definition/normalize';
import { outputKeys } from './read-query';

export type Action = 'read' | 'edit' | 'delete' | 'create';

const isPlainValue = (v: unknown) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/**
 * Stored and new value are the same (multiple links compared as sets). A write-only value is
 * never the same: records are read without it, and comparing it would tell clients what it holds.
 */
export function sameValue(field: FieldModel, stored: unknown, next: unknown): boolean {
  return !field.def?.writeOnly && equalValues(field, stored, next);
}

/** Two values of a field are equal (multiple links compared as sets). */
export function equalValues(field: FieldModel, stored: unknown, next: unknown): boolean {
  if (field.type === 'linkMultiple') {
    const a = new Set((stored as string[] | null) ?? []);
    const b = new Set((next as string[] | null) ?? []);
    return a.size === b.size && [...a].every((x) => b.has(x));
  }
  // Strings, finite numbers and booleans are equal in JSON exactly when they are ===: no need to
  // serialize them (upsert compares every field of every item).
  if (isPlainValue(stored) && isPlainValue(next)) return stored === next;
  return JSON.stringify(stored ?? null) === JSON.stringify(next ?? null);
}

/** The permission checks of one entity type: entity scopes, `own` records, field rights. */
export class RecordGuard {
  constructor(
    private readonly model: EntityModel,
    private readonly accessFor: (user: RequestContext['user']) => Promise<UserAccess>,
  ) {}

  /** The caller's rights, resolved once per context. */
  async access(ctx: RequestContext): Promise<UserAccess> {
    return (ctx.access ??= await this.accessFor(ctx.user));
  }

  /** Refuses an action the role does not allow on this entity type at all (403). */
  async scope(ctx: RequestContext, action: Action): Promise<{ access: UserAccess; scope: ScopeAccess }> {
    const access = await this.access(ctx);
    const scope = access.scope(this.model.name);
    if (action === 'create' ? !scope.create : scope[action] === 'no') {
      throw forbidden(`Not allowed to ${action} ${this.model.name}`);
    }
    return { access, scope };
  }

  canRead(access: UserAccess, field: FieldModel): boolean {
    return field.system || access.field(this.model.name, field.name).read;
  }

  /** Whether the record belongs to the user: created by them or assigned to them. */
  isOwn(ctx: RequestContext, record: ApiRecord): boolean {
    const id = ctx.user?.id;
    return !!id && (record.createdById === id || record.assignedUserId === id);
  }

  /** 403 unless the level allows this record (`own`: only the user's own). */
  assertLevel(ctx: RequestContext, record: ApiRecord, { level, action }: { level: ScopeAccess['edit']; action: Action }): void {
    if (level === 'own' && !this.isOwn(ctx, record)) throw forbidden(`Not allowed to ${action} this ${this.model.name}`);
  }

  /** Restricts a query to the user's own records. */
  ownOnly(ctx: RequestContext, qb: Knex.QueryBuilder): void {
    const t = this.model.table;
    const assigned = this.model.field.get('assignedUser');
    qb.where((w) => {
      w.where(`${t}.created_by_id`, ctx.user?.id ?? '');
      if (assigned?.column) w.orWhere(`${t}.${assigned.column}`, ctx.user?.id ?? '');
    });
  }

  /** Fields chosen by `select` must all be readable (403); without select, unreadable ones are left out. */
  readable(access: UserAccess, fields: FieldModel[], explicit: boolean): FieldModel[] {
    if (!explicit) return fields.filter((f) => this.canRead(access, f));
    const hidden = fields.find((f) => !this.canRead(access, f));
    if (hidden) throw forbidden(`Not allowed to read ${this.model.name}.${hidden.name}`);
    return fields;
  }

  /** 403 when a body changes a field the user may not edit; unchanged values are dropped. */
  assertEditable(access: UserAccess, values: Map<FieldModel, unknown>, existing: ApiRecord | undefined): void {
    for (const [field, value] of values) {
      if (access.field(this.model.name, field.name).edit) continue;
      if (existing && sameValue(field, existing[field.key], value)) {
        values.delete(field);
        continue;
      }
      throw forbidden(`Not allowed to edit ${this.model.name}.${field.name}`);
    }
  }

  /** Drops the keys of `fields` the user may not read from a record about to be returned. */
  async present(ctx: RequestContext, record: ApiRecord, fields: readonly FieldModel[]): Promise<ApiRecord> {
    const access = await this.access(ctx);
    if (access.unrestricted) return record;
    const hidden = new Set(outputKeys(fields.filter((f) => !this.canRead(access, f))));
    return Object.fromEntries(Object.entries(record).filter(([k]) => !hidden.has(k))) as ApiRecord;
  }
}
