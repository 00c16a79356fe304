import type { Derive, Rights, ScopeAccess, UserAccess } from '../auth/access-control';
import { forbidden } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel } from '../definition/normalize';
import type { QueryBuilder } from '../sql/database';
import { outputKeys } from '../sql/read-query';
import { ownedBy } from '../sql/record-store';
import { assertMay, type WriteAction } from './write-rules';
import { versionOf, withRecordVersion } from './version';

export type Action = WriteAction | 'read';

/** The read-side permission checks of one entity type: entity scopes, `own` records, readable fields. */
export class RecordGuard {
  /** Of a list of this entity type's fields, those the rights let read (kept per role set and list). */
  private readonly readableFields: Derive<readonly FieldModel[], FieldModel[]>;
  /** The output keys of the fields of a list the rights do not let read. */
  private readonly hiddenKeys: Derive<readonly FieldModel[], ReadonlySet<string>>;

  constructor(
    private readonly model: EntityModel,
    private readonly accessFor: (user: RequestContext['user']) => Promise<UserAccess>,
  ) {
    const canRead = (rights: Rights, field: FieldModel) => field.system || rights.field(model.name, field.name).read;
    this.readableFields = (fields, rights) => fields.filter((f) => canRead(rights, f));
    this.hiddenKeys = (fields, rights) => new Set(outputKeys(fields.filter((f) => !canRead(rights, f))));
  }

  /** The caller's rights, resolved once per context. */
  async access(ctx: RequestContext): Promise<UserAccess> {
    return (ctx.access ??= await this.accessFor(ctx.user));
  }

  /** Refuses an action the role does not allow on this entity type at all (403). */
  async scope(ctx: RequestContext, action: Action): Promise<{ access: UserAccess; scope: ScopeAccess }> {
    const access = await this.access(ctx);
    return { access, scope: assertMay(this.model, access, action) };
  }

  canRead(access: UserAccess, field: FieldModel): boolean {
    return field.system || access.field(this.model.name, field.name).read;
  }

  /** Restricts a query to the user's own records. */
  ownOnly(ctx: RequestContext, qb: QueryBuilder): void {
    ownedBy(this.model, { userId: ctx.user?.id ?? '' })(qb);
  }

  /**
   * Fields chosen by `select` must all be readable (403); without select, unreadable ones are left
   * out (decided once per role set and list of fields).
   */
  readable(access: UserAccess, fields: FieldModel[], explicit: boolean): FieldModel[] {
    if (!explicit) return access.unrestricted ? fields : access.derived(fields, this.readableFields);
    const hidden = fields.find((f) => !this.canRead(access, f));
    if (hidden) throw forbidden(`Not allowed to read ${this.model.name}.${hidden.name}`);
    return fields;
  }

  /** Drops the keys of `fields` the user may not read from a record about to be returned. */
  async present(ctx: RequestContext, record: ApiRecord, fields: readonly FieldModel[]): Promise<ApiRecord> {
    const access = await this.access(ctx);
    if (access.unrestricted) return record;
    const hidden = access.derived(fields, this.hiddenKeys);
    const shown = Object.fromEntries(Object.entries(record).filter(([k]) => !hidden.has(k))) as ApiRecord;
    // The copy is the same version of the record (its `ETag`).
    const version = versionOf(record);
    return version === undefined ? shown : withRecordVersion(shown, version);
  }
}
