import type { ContextUser } from '../context';
import { ApiError } from '../errors';

/** How far a right reaches: every record, the user's own records, or none. */
export type AccessLevel = 'all' | 'own' | 'no';

/** A role's rights on one entity type. */
export interface ScopeAccess {
  create: boolean;
  read: AccessLevel;
  edit: AccessLevel;
  delete: AccessLevel;
  stream: boolean;
}

export interface FieldAccess {
  read: boolean;
  edit: boolean;
}

/** A role as stored: rights per entity type and restrictions per field. */
export interface RoleData {
  id: string;
  scopes: Record<string, Partial<ScopeAccess>>;
  fields: Record<string, Record<string, Partial<FieldAccess>>>;
}

export const FULL_ACCESS: Readonly<ScopeAccess> = Object.freeze({ create: true, read: 'all', edit: 'all', delete: 'all', stream: true });
export const NO_ACCESS: Readonly<ScopeAccess> = Object.freeze({ create: false, read: 'no', edit: 'no', delete: 'no', stream: false });

/** Entity types only admins may write, whatever a role says (no way to grant oneself admin). */
export const ADMIN_WRITE_ONLY = new Set(['User', 'Role']);
/** Entity types only admins may see at all, whatever a role says (webhook secrets and targets). */
export const ADMIN_ONLY = new Set(['Webhook', 'WebhookDelivery']);

const RANK: Record<AccessLevel, number> = { no: 0, own: 1, all: 2 };
const wider = (a: AccessLevel, b: AccessLevel | undefined): AccessLevel => (b && RANK[b] > RANK[a] ? b : a);

export const forbidden = (message: string): ApiError => new ApiError('CORE_FORBIDDEN', message);

/** The rights a derived decision reads. */
export type Rights = Pick<RoleRights, 'scope' | 'field' | 'fieldRule'>;

/** A decision derived from rights and a list only (see `RoleRights.derived`). */
export type Derive<TList, TValue> = (list: TList, rights: Rights) => TValue;

/** Every field readable and editable (admins, the system). */
const ALL_FIELD_RIGHTS: Readonly<FieldAccess> = Object.freeze({ read: true, edit: true });
/** No field readable or editable (entity types only admins may see). */
const NO_FIELD_RIGHTS: Readonly<FieldAccess> = Object.freeze({ read: false, edit: false });

/**
 * The rights of one set of roles, combined once and shared by the requests of every user who has
 * exactly these roles (see `AccessService`), with the decisions derived from them (the fields of
 * an entity type they may read). Roles are data: a changed role is a new `RoleData`, hence new
 * rights.
 */
export class RoleRights {
  private readonly scopes = new Map<string, ScopeAccess>();
  private readonly fields = new Map<string, FieldAccess>();
  private readonly lists = new WeakMap<object, WeakMap<object, unknown>>();

  constructor(readonly roles: readonly RoleData[] = []) {}

  scope(entity: string): ScopeAccess {
    if (ADMIN_ONLY.has(entity)) return NO_ACCESS;
    let scope = this.scopes.get(entity);
    if (!scope) {
      scope = { ...NO_ACCESS };
      for (const role of this.roles) {
        const s = role.scopes[entity];
        if (!s) continue;
        scope.create ||= s.create === true;
        scope.stream ||= s.stream === true;
        scope.read = wider(scope.read, s.read);
        scope.edit = wider(scope.edit, s.edit);
        scope.delete = wider(scope.delete, s.delete);
      }
      if (ADMIN_WRITE_ONLY.has(entity)) Object.assign(scope, { create: false, edit: 'no', delete: 'no' });
      // Everyone may follow (and cancel) the jobs they started, unless a role says more.
      if (entity === 'Job' && !this.roles.some((r) => r.scopes.Job)) Object.assign(scope, { read: 'own', edit: 'own' });
      this.scopes.set(entity, Object.freeze(scope));
    }
    return scope;
  }

  field(entity: string, field: string): FieldAccess {
    if (ADMIN_ONLY.has(entity)) return NO_FIELD_RIGHTS;
    if (entity === 'Job' && !this.roles.some((r) => r.scopes.Job)) return ALL_FIELD_RIGHTS;
    const key = `${entity}.${field}`;
    let access = this.fields.get(key);
    if (!access) {
      const rights = { read: false, edit: false };
      for (const role of this.roles) {
        const s = role.scopes[entity];
        if (!s) continue;
        const f = role.fields[entity]?.[field] ?? {};
        if (s.read && s.read !== 'no') rights.read ||= f.read !== false;
        if ((s.edit && s.edit !== 'no') || s.create) rights.edit ||= f.edit !== false && f.read !== false;
      }
      this.fields.set(key, (access = Object.freeze(rights)));
    }
    return access;
  }

  /**
   * What the roles that name the entity type say of one of its fields, apart from their entity
   * rights: readable unless every such role sets `read: false`, editable unless every such role
   * sets `read: false` or `edit: false` (both true when no role names the type).
   */
  fieldRule(entity: string, field: string): FieldAccess {
    const naming = this.roles.filter((r) => r.scopes[entity]);
    if (naming.length === 0) return ALL_FIELD_RIGHTS;
    const rules = naming.map((r) => r.fields[entity]?.[field] ?? {});
    return { read: rules.some((f) => f.read !== false), edit: rules.some((f) => f.edit !== false && f.read !== false) };
  }

  /**
   * What `derive` answers for `list` and these rights, worked out once per list (by identity) and
   * deriving function (keep it in a constant): a decision that depends on the rights and the list
   * only (the readable fields of an entity type). Lists made per request are forgotten with them.
   */
  derived<TList extends object, TValue>(list: TList, derive: Derive<TList, TValue>): TValue {
    let byList = this.lists.get(derive);
    if (!byList) this.lists.set(derive, (byList = new WeakMap()));
    if (byList.has(list)) return byList.get(list) as TValue;
    const value = derive(list, this);
    byList.set(list, value);
    return value;
  }
}

/**
 * What one user may do: roles combined to the most permissive, admins and the system unrestricted,
 * an entity type no role mentions denied. The combined rights may be shared between users with
 * the same roles (`RoleRights`).
 */
export class UserAccess {
  private readonly rights: RoleRights;

  constructor(
    readonly user: ContextUser | undefined,
    roles: readonly RoleData[] | RoleRights = [],
  ) {
    this.rights = roles instanceof RoleRights ? roles : new RoleRights(roles);
  }

  /** The system (no user) and admins pass every check. */
  get unrestricted(): boolean {
    return !this.user || this.user.isAdmin;
  }

  scope(entity: string): ScopeAccess {
    return this.unrestricted ? FULL_ACCESS : this.rights.scope(entity);
  }

  /**
   * Field rights: a field is readable (editable) when some role that may read (write) the entity
   * type does not restrict it. Roles list restrictions only.
   */
  field(entity: string, field: string): FieldAccess {
    return this.unrestricted ? ALL_FIELD_RIGHTS : this.rights.field(entity, field);
  }

  /** The field rights roles set on a field, apart from their entity rights (see `RoleRights.fieldRule`). */
  fieldRule(entity: string, field: string): FieldAccess {
    return this.unrestricted ? ALL_FIELD_RIGHTS : this.rights.fieldRule(entity, field);
  }

  /**
   * Whether a field of a record the caller sees through a link may show (the name, code or user
   * name that names a linked record in `<link>Name`, the language variant of its name,
   * `nameDeDE`): the caller's field rights where the caller reads the entity type; where it does
   * not (a link shows its records' names whatever the caller may read of them), unless the roles
   * that name the type hide the field (`fieldRule`).
   */
  readsThroughLink(entity: string, field: string): boolean {
    return this.unrestricted || readsThroughLink(this, entity, field);
  }

  /**
   * A decision derived from the caller's rights and `list` only, worked out once per list and
   * deriving function for all callers with the same roles (see `RoleRights.derived`); for
   * unrestricted callers, at each call.
   */
  derived<TList extends object, TValue>(list: TList, derive: Derive<TList, TValue>): TValue {
    return this.unrestricted ? derive(list, this) : this.rights.derived(list, derive);
  }

  /** The rights on every listed entity type, for the session answer. */
  acl(entities: Iterable<string>): Record<string, ScopeAccess> {
    return Object.fromEntries([...entities].map((name) => [name, { ...this.scope(name) }]));
  }
}

/** `UserAccess.readsThroughLink` for rights: a field of a record seen through a link may show. */
export function readsThroughLink(rights: Rights, entity: string, field: string): boolean {
  if (ADMIN_ONLY.has(entity)) return false;
  return rights.scope(entity).read !== 'no' ? rights.field(entity, field).read : rights.fieldRule(entity, field).read;
}
