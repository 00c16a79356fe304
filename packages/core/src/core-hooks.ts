import type { AccessService } from './auth/access-service';
import type { AuthService } from './auth/auth-service';
import { hashPassword } from './auth/password';
import { assertRoleShape } from './auth/role-validation';
import type { UserAccess } from './auth/access-control';
import type { RequestContext } from './context';
import type { ApiRecord } from './declarations';
import type { SchemaModel } from './definition/model';
import { ApiError } from './errors';
import type { Registry } from './registry';
import type { JobService } from './jobs/job-service';
import type { CacheEvent } from './sql/cache-events';
import { ENDED_PAYLOAD } from './sql/job-store';
import { nowDateTime } from './time';

/**
 * A client may only cancel its own pending job (jobs are `serverCreated`: no client creates one);
 * a pending job restored from the bin is queued again.
 */
export function installJobHooks(registry: Registry, jobs: JobService): void {
  registry.onRecord('beforeUpdate', 'Job', (event) => {
    const { data, existing } = event;
    const changed = (k: string) => JSON.stringify((data as Record<string, unknown>)[k] ?? null) !== JSON.stringify((existing as Record<string, unknown>)[k] ?? null);
    const keys = Object.keys(data ?? {}).filter(changed);
    if (keys.some((k) => k !== 'status') || (keys.includes('status') && data?.status !== 'Canceled')) {
      throw new ApiError('CORE_VALIDATION_FAILED', 'Only status Canceled can be set on a job', {
        details: { issues: [{ path: ['status'], code: 'invalid_enum_value', message: 'status may only become Canceled' }] },
      });
    }
    if (keys.includes('status') && existing?.status !== 'Pending') {
      throw new ApiError('CORE_CONFLICT', `Only a pending job can be canceled; this one is ${String(existing?.status)}`);
    }
    // A worker may take the job between this check and the write: the write checks again. A
    // canceled job has ended, as one that ran to its end has, and keeps no input either.
    if (keys.includes('status') && data) {
      event.expect = { ...event.expect, status: 'Pending' };
      data.endedAt = nowDateTime();
      data.payload = { ...ENDED_PAYLOAD };
    }
  });
  // A running job goes on writing whether its record is there or not: deleting it would hide work
  // that has not stopped. It is deleted once it has ended (or while it is pending: it never runs then).
  registry.onRecord('beforeDelete', 'Job', ({ existing }) => {
    if (existing?.status === 'Running') throw new ApiError('CORE_CONFLICT', 'A running job cannot be deleted; delete it once it has ended');
  });
  registry.onRecord('afterRestore', 'Job', ({ id }) => jobs.requeue(id as string));
  registry.onPresent('Job', {
    applies: ({ fields }) => fields.some((f) => f.name === 'result'),
    load: () => ['createdBy'],
    present({ ctx, records, access }) {
      for (const job of records) if (!mayReadJobResult(ctx, access, job)) job.result = null;
    },
  });
}

/**
 * Whether the caller may read a job's result: the records it wrote, as its creator saw them. Only
 * the creator (and admins) may: a role that reads every job follows their progress, not the
 * records of types it may not read.
 */
export function mayReadJobResult(ctx: RequestContext, access: UserAccess, job: ApiRecord): boolean {
  return access.unrestricted || (ctx.user !== undefined && job.createdById === ctx.user.id);
}

/** Password writes on User are hashed; a changed password revokes the user's tokens. */
export function installUserHooks(registry: Registry, auth: () => AuthService, passwordCost?: number): void {
  const hashInBody = async ({ data }: { data?: Record<string, unknown> }) => {
    if (!data || data.password === undefined || data.password === null) return;
    if (typeof data.password !== 'string' || data.password.length === 0 || data.password.length > 1000) {
      throw new ApiError('CORE_VALIDATION_FAILED', 'password must be a non-empty string', {
        details: { issues: [{ path: ['password'], code: 'invalid_type', message: 'password must be a non-empty string' }] },
      });
    }
    data.password = await hashPassword(data.password, passwordCost);
  };
  // The stored records whose update sets a password (the same object reaches afterUpdate). The
  // tokens go once the change is stored: a refused change (409, 412, 400) keeps them, as it keeps
  // the password. A token issued meanwhile from the old password fails its credential stamp.
  const passwordChanges = new WeakSet<object>();
  registry.onRecord('beforeCreate', 'User', hashInBody);
  registry.onRecord('beforeUpdate', 'User', async (event) => {
    if (event.data?.password !== undefined && event.existing) passwordChanges.add(event.existing);
    await hashInBody(event);
  });
  registry.onRecord('afterUpdate', 'User', async ({ id, existing, record }) => {
    await auth().forgetUser(id as string);
    const activityChanged = existing && record && existing.isActive !== record.isActive;
    if (activityChanged || (existing && passwordChanges.has(existing))) await auth().revokeUser(id as string);
  });
  registry.onRecord('afterDelete', 'User', ({ id }) => auth().revokeUser(id as string));
}

/** Role writes are checked for shape; a changed or deleted role leaves every process's cache. */
export function installRoleHooks(registry: Registry, { accessService, schema }: { accessService: AccessService; schema: SchemaModel }, announce: (event: CacheEvent) => Promise<unknown>): void {
  const checkRole = ({ data }: { data?: Record<string, unknown> }) => assertRoleShape(data ?? {}, schema);
  registry.onRecord('beforeCreate', 'Role', checkRole);
  registry.onRecord('beforeUpdate', 'Role', checkRole);
  for (const hook of ['afterUpdate', 'afterDelete'] as const) {
    registry.onRecord(hook, 'Role', async ({ id }) => {
      accessService.forgetRole(id as string);
      await announce({ kind: 'role', id: id as string });
    });
  }
}
