import { randomBytes } from 'node:crypto';
import type { EntityApi } from './app-types';
import { systemContext } from './context';
import { ApiError } from './errors';

/**
 * Creates an admin user when no user of that name exists; never changes an existing one. Without
 * a password, one is generated and returned (print it once; it is not stored in clear anywhere).
 */
export async function ensureAdmin(
  api: Pick<EntityApi, 'repository'>,
  admin: { userName: string; password?: string },
): Promise<{ created: boolean; password?: string }> {
  const users = api.repository('User');
  const ctx = systemContext();
  const found = await users.find(ctx, {
    where: [{ type: 'equals', attribute: 'userName', value: admin.userName }],
    maxSize: 1,
    collectionOnly: true,
  });
  if (found.list?.length) return { created: false };
  const password = admin.password ?? randomBytes(18).toString('base64url');
  try {
    await users.create(ctx, { userName: admin.userName, name: 'Administrator', password, isAdmin: true, isActive: true });
  } catch (error) {
    // Another process starting at the same moment created it first.
    if (error instanceof ApiError && error.code === 'CORE_UNIQUE_VIOLATION') return { created: false };
    throw error;
  }
  return { created: true, ...(admin.password === undefined && { password }) };
}
