import type { Derive, Rights, ScopeAccess, UserAccess } from '../auth/access-control';
import { forbidden, readsThroughLink } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/normalize';
import type { QueryBuilder } from '../sql/database';
import { NAME_FIELDS, outputKeys } from '../sql/read-query';
import { ownedBy } from '../sql/record-store';
import { counterpartOf, knowSchema, oneToManyReach } from './counterparts';
import { assertMay, type WriteAction } from './write-rules';
import { versionOf, withRecordVersion } from './version';

export type Action = WriteAction | 'read';

const NO_LINKS: ReadonlyMap<FieldModel, EntityModel> = new Map();

/** The read-side permission checks of one entity type: entity scopes, `own` records, readable fields. */
export class RecordGuard {
  /** Of a list of this entity type's fields, those the rights let read (kept per role set and list). */
  private readonly readableFields: Derive<readonly FieldModel[], FieldModel[]>;
  /** The output keys of the fields of a list the rights do not let read. */
  private readonly hiddenKeys: Derive<readonly FieldModel[], ReadonlySet<string>>;

  /** Whether the rights let read a field (see `mayReadField`). */
  private readonly readRight: (rights: Rights, field: FieldModel) => boolean;

  /** The links whose targets the rights do not let name by every name field, with their targets (see `linksNamedOtherwise`). */
  private readonly namedOtherwise: Derive<EntityModel, ReadonlyMap<FieldModel, EntityModel>>;

  constructor(
    private readonly model: EntityModel,
    private readonly accessFor: (user: RequestContext['user']) => Promise<UserAccess>,
    schema: SchemaModel,
  ) {
    knowSchema(model, schema);
    this.readRight = (rights, field) => mayReadField(rights, { schema, model, field });
    this.readableFields = (fields, rights) => fields.filter((f) => this.readRight(rights, f));
    this.hiddenKeys = (fields, rights) => new Set(outputKeys(fields.filter((f) => !this.readRight(rights, f))));
    this.namedOtherwise = (entity, rights) => {
      const links = new Map<FieldModel, EntityModel>();
      for (const field of entity.fields) {
        const target = (field.type === 'link' || field.type === 'linkMultiple') && field.target ? schema.entity(field.target) : undefined;
        const hides = (name: string) => !!target?.field.get(name)?.column && !readsThroughLink(rights, target.name, name);
        if (target && NAME_FIELDS.some(hides)) links.set(field, target);
      }
      return links;
    };
  }

  /**
   * The links of this entity type whose records the caller may not name by every field that names
   * a record (`<link>Name`: name, code, userName; `UserAccess.readsThroughLink`), with their
   * target types: none for most callers (decided once per role set).
   */
  linksNamedOtherwise(access: UserAccess): ReadonlyMap<FieldModel, EntityModel> {
    return access.unrestricted ? NO_LINKS : access.derived(this.model, this.namedOtherwise);
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

  /**
   * Whether the caller may read a field. A link and the link of the other side state one relation
   * (`Product.brand` and `Brand.products`): a role that may not read one may not read the other,
   * or the hidden relation would show from the other side.
   */
  canRead(access: UserAccess, field: FieldModel): boolean {
    return field.system || this.readRight(access, field);
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

/**
 * Whether rights let read a field of `model`: system fields always; others by the role's field
 * right, and a link also by the right on the field of the other side that states the same
 * relation (`Product.brand` and `Brand.products`): a role that may not read one may not read the
 * other, or the hidden relation would show from the other side. Every read of a field (answers,
 * filters, sorting, diffs of the change log, metadata) asks this.
 */
export function mayReadField(rights: Rights, { schema, model, field }: { schema: SchemaModel; model: EntityModel; field: FieldModel }): boolean {
  if (field.system) return true;
  if (!rights.field(model.name, field.name).read) return false;
  // A one-to-many list (`Brand.products`) is a list of records of its target type, not a value
  // the record stores: hidden from a role that reads none of them (see `linkScopes`).
  if (oneToManyReach(rights, field) === 'no') return false;
  const other = counterpartOf(schema, model, field);
  // Hidden by a field right of a type the role reads; a type it does not read at all hides no
  // link to it (its links show as stored, as under `own`).
  return !other || rights.field(other.entity, other.field).read || rights.scope(other.entity).read === 'no';
}
