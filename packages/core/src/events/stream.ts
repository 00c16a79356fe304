import type { UserAccess } from '../auth/access-control';
import { forbidden } from '../auth/access-control';
import { systemContext, type RequestContext } from '../context';
import type { EntityModel, SchemaModel } from '../definition/model';
import { oneToManyReach } from '../records/counterparts';
import { mayReadField } from '../records/guard';
import { recordChanges, type StoredChange } from '../sql/change-store';
import { asNonNegativeInt } from '../sql/where-values';
import type { Diff } from '../records/changes';
import { visibleRecord } from '../records/read';
import type { Repository } from '../records/repository';

/** The most changes one page of a stream holds, and how many it holds unless asked. */
export const MAX_STREAM_SIZE = 200;
const DEFAULT_STREAM_SIZE = 20;

/** One change as a stream shows it (CONTRACT §16). */
export interface StreamItem {
  id: string;
  action: string;
  diff: Diff;
  userId: string | null;
  userName: string | null;
  actor?: { id: string; name: string | null };
  createdAt: string;
}

/**
 * The diff as this reader may see it: the keys of fields the reader may not read are left out
 * (attribute values, which no field right covers, stay), and so are one-to-many lists of records
 * the reader reads only some of (`read: own` on their type): their ids would name the others.
 */
export function readableDiff(schema: SchemaModel, model: EntityModel, { access, diff }: { access: UserAccess; diff: Diff }): Diff {
  if (access.unrestricted) return diff;
  const shown: Diff = {};
  for (const [key, value] of Object.entries(diff)) {
    const field = model.byKey.get(key) ?? model.field.get(key);
    if (!field || (mayReadField(access, { schema, model, field }) && oneToManyReach(access, field) !== 'own')) shown[key] = value;
  }
  return shown;
}

/** 403 unless the caller may follow changes of this entity type (the role's `stream`). */
export async function assertMayStream(repo: Repository, ctx: RequestContext): Promise<UserAccess> {
  const access = await repo.guard.access(ctx);
  if (!access.scope(repo.model.name).stream) throw forbidden(`Not allowed to stream ${repo.model.name}`);
  return access;
}

/** The names of the users who made some changes, by id (as the system: a name is no secret of a user's record). */
async function userNames(repo: Repository, changes: readonly StoredChange[]): Promise<Map<string, string | null>> {
  const ids = new Set(changes.flatMap((c) => [c.userId, c.actorId]).filter((id): id is string => id !== null));
  if (ids.size === 0) return new Map();
  const users = await repo.env.repository('User').findByIds(systemContext(), ids, { select: ['name', 'userName'] });
  return new Map([...users].map(([id, u]) => [id, ((u.name as string | null) || (u.userName as string | null)) ?? null]));
}

/**
 * A record's changes, newest first (`GET entityStream`, `GET /api/v1/{Entity}/{id}/stream`): the
 * caller needs read access to the record (403, 404 as a read) and the role's `stream` (403); each
 * diff leaves out the fields the caller may not read.
 */
export async function recordStream(repo: Repository, ctx: RequestContext, { id, offset, maxSize }: { id: string; offset?: unknown; maxSize?: unknown }): Promise<{ total: number; list: StreamItem[] }> {
  const limit = maxSize === undefined ? DEFAULT_STREAM_SIZE : asNonNegativeInt(maxSize, 'maxSize', MAX_STREAM_SIZE);
  const skip = offset === undefined ? 0 : asNonNegativeInt(offset, 'offset');
  await visibleRecord(repo, ctx, { id, fields: repo.readable.filter((f) => f.name === 'id'), names: false });
  const access = await assertMayStream(repo, ctx);
  const { total, list } = await recordChanges(repo.sql, { entityType: repo.model.name, recordId: id, offset: skip, limit });
  const names = await userNames(repo, list);
  return {
    total,
    list: list.map((c) => ({
      id: String(c.seq),
      action: c.action,
      diff: readableDiff(repo.env.schema, repo.model, { access, diff: c.diff }),
      userId: c.userId,
      userName: c.userId ? (names.get(c.userId) ?? null) : null,
      ...(c.actorId && { actor: { id: c.actorId, name: names.get(c.actorId) ?? null } }),
      createdAt: c.createdAt,
    })),
  };
}
