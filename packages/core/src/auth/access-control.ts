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

/**
 * What one user may do: roles combined to the most permissive, admins and the system unrestricted,
 * an entity type no role mentions denied.
 */
export class UserAccess {
  private readonly scopes = new Map<string, ScopeAccess>();
  private readonly fieldCache = new Map<string, FieldAccess>();

  constructor(
    readonly user: ContextUser | undefined,
    private readonly roles: readonly RoleData[] = [],
  ) {}

  /** The system (no user) and admins pass every check. */
  get unrestricted(): boolean {
    return !this.user || this.user.isAdmin;
  }

  scope(entity: string): ScopeAccess {
    if (this.unrestricted) return FULL_ACCESS;
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
      this.scopes.set(entity, scope);
    }
    return scope;
  }

  /**
   * Field rights: a field is readable (editable) when some role that may read (write) the entity
   * type does not restrict it. Roles list restrictions only.
   */
  field(entity: string, field: string): FieldAccess {
    if (this.unrestricted) return { read: true, edit: true };
    if (ADMIN_ONLY.has(entity)) return { read: false, edit: false };
    if (entity === 'Job' && !this.roles.some((r) => r.scopes.Job)) return { read: true, edit: true };
    const key = `${entity}.${field}`;
    let access = this.fieldCache.get(key);
    if (!access) {
      access = { read: false, edit: false };
      for (const role of this.roles) {
        const s = role.scopes[entity];
        if (!s) continue;
        const f = role.fields[entity]?.[field] ?? {};
        if (s.read && s.read !== 'no') access.read ||= f.read !== false;
        if ((s.edit && s.edit !== 'no') || s.create) access.edit ||= f.edit !== false && f.read !== false;
      }
      this.fieldCache.set(key, access);
    }
    return access;
  }

  /** The rights on every listed entity type, for the session answer. */
  acl(entities: Iterable<string>): Record<string, ScopeAccess> {
    return Object.fromEntries([...entities].map((name) => [name, { ...this.scope(name) }]));
  }
}
