import type { ContextUser } from '../context';
import { UserAccess, type RoleData } from './access-control';

/**
 * Resolves a user's rights from their roles. Roles are cached for a few seconds; a changed role is
 * forgotten at once by every process told of it (`forgetRole`, through the database's cache
 * events), and within the cache time by one that missed the news.
 */
export class AccessService {
  private readonly cache = new Map<string, { role: RoleData; at: number }>();

  constructor(
    private readonly loadRoles: (ids: readonly string[]) => Promise<RoleData[]>,
    private readonly cacheMs = 5000,
  ) {}

  async forUser(user: ContextUser | undefined): Promise<UserAccess> {
    if (!user || user.isAdmin || user.rolesIds.length === 0) return new UserAccess(user, []);
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
    return new UserAccess(user, roles);
  }

  forgetRole(id: string): void {
    this.cache.delete(id);
  }

  forgetAll(): void {
    this.cache.clear();
  }
}
