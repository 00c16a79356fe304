import type { ContextUser } from '../context';
import { RoleRights, UserAccess, type RoleData } from './access-control';

/** Role sets whose rights are kept; more start over (each is a few maps). */
const MAX_ROLE_SETS = 1000;

/**
 * Resolves a user's rights from their roles. Roles are cached for a few seconds; a changed role is
 * forgotten at once by every process told of it (`forgetRole`, through the database's cache
 * events), and within the cache time by one that missed the news. The combined rights of a set of
 * roles (`RoleRights`, with the decisions derived from them) are shared by every request of every
 * user with that set, as long as the roles are the ones they were combined from.
 */
export class AccessService {
  private readonly cache = new Map<string, { role: RoleData; at: number }>();
  private readonly rights = new Map<string, RoleRights>();
  private readonly noRoles = new RoleRights();

  constructor(
    private readonly loadRoles: (ids: readonly string[]) => Promise<RoleData[]>,
    private readonly cacheMs = 5000,
  ) {}

  async forUser(user: ContextUser | undefined): Promise<UserAccess> {
    if (!user || user.isAdmin || user.rolesIds.length === 0) return new UserAccess(user, this.noRoles);
    const now = Date.now();
    const fresh = (id: string) => {
      const hit = this.cache.get(id);
      return hit && now - hit.at <= this.cacheMs ? hit.role : undefined;
    };
    const missing = user.rolesIds.filter((id) => !fresh(id));
    if (missing.length) {
      for (const role of await this.loadRoles(missing)) this.cache.set(role.id, { role, at: now });
    }
    const roles = user.rolesIds.map(fresh).filter((r): r is RoleData => r !== undefined);
    return new UserAccess(user, this.rightsOf(roles));
  }

  /** The rights of a set of roles: those combined before when made of the same roles (the same data), else new ones. */
  private rightsOf(roles: readonly RoleData[]): RoleRights {
    const sorted = [...roles].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const key = sorted.map((r) => r.id).join(',');
    const known = this.rights.get(key);
    if (known && known.roles.length === sorted.length && known.roles.every((r, i) => r === sorted[i])) return known;
    if (!known && this.rights.size >= MAX_ROLE_SETS) this.rights.clear();
    const rights = new RoleRights(sorted);
    this.rights.set(key, rights);
    return rights;
  }

  forgetRole(id: string): void {
    this.cache.delete(id);
    for (const [key, rights] of this.rights) if (rights.roles.some((r) => r.id === id)) this.rights.delete(key);
  }

  forgetAll(): void {
    this.cache.clear();
    this.rights.clear();
  }
}
