import type { RequestContext } from '../context';
import { isValidId } from '../definition/validate-record';
import { notFound } from '../errors';
import { lastRecordChange } from '../sql/change-store';
import { lastWriteOf, listenedAt, startListening } from '../sql/listening-store';
import { visibleRecord } from '../records/read';
import type { Repository } from '../records/repository';

/** How long a record stays listened to after the last `startEntityListening`. */
export const LISTENING_MS = 8 * 60 * 60 * 1000;

/** Unix seconds of a `YYYY-MM-DD HH:MM:SS` (UTC) time. */
export const unixSeconds = (dateTime: string): number => Math.floor(Date.parse(`${dateTime.replace(' ', 'T')}Z`) / 1000);

/**
 * When a record last changed, in Unix seconds: the later of its last logged change and its
 * `modifiedAt`, plus its version's last three digits as milliseconds. Every write moves the
 * version, also those the server makes without logging a change (a job's worker, a share link's
 * count of uses), so the timestamp moves after every write (CONTRACT §16), also after several
 * within one second, and stays within the second of the last change. A record removed for good
 * has no version: it answers the time of its last logged change (its removal) plus 500 to 999 ms
 * by that change's `seq`, so that neither its removal nor a new record with its id within the
 * same second (version 1: 0 ms) leaves the timestamp where it was.
 */
async function changedAt(repo: Repository, id: string): Promise<number | undefined> {
  const of = { entityType: repo.model.name, recordId: id };
  const [logged, written] = await repo.translated(() => Promise.all([lastRecordChange(repo.sql, of), lastWriteOf(repo.sql, { model: repo.model, id })]));
  const seconds = Math.max(logged ? unixSeconds(logged.at) : 0, written?.modifiedAt ? unixSeconds(written.modifiedAt) : 0);
  if (!written) return logged && seconds + (500 + (logged.seq % 500)) / 1000;
  return seconds + ((written.version - 1) % 1000) / 1000;
}

/** The path of a record's listening endpoint, below the public URL. */
export const listeningPath = (entity: string, id: string): string => `listening/entity/${encodeURIComponent(entity)}/${encodeURIComponent(id)}.json`;

/**
 * `startEntityListening`: the caller, who may read the record, listens to it for the next eight
 * hours; answers when it last changed and the endpoint that tells it without a token.
 */
export async function listen(repo: Repository, ctx: RequestContext, id: string): Promise<{ timestamp: number; endpoint: string }> {
  await visibleRecord(repo, ctx, { id, fields: repo.readable.filter((f) => f.name === 'id'), names: false });
  await repo.translated(() => startListening(repo.sql, { entityType: repo.model.name, recordId: id, at: Date.now() }));
  return { timestamp: (await changedAt(repo, id)) ?? 0, endpoint: listeningPath(repo.model.name, id) };
}

/**
 * The public listening endpoint: `{timestamp}` of the record's last change while someone listened
 * to it within the last eight hours, else 404. Read from the database: a write of any process shows.
 */
export async function listeningTimestamp(repo: Repository, id: string): Promise<{ timestamp: number }> {
  // No record has such an id (a NUL, which PostgreSQL cannot even compare): nobody listens to it.
  if (!isValidId(id)) throw notFound(repo.model.name, id);
  const at = await repo.translated(() => listenedAt(repo.sql, { entityType: repo.model.name, recordId: id }));
  const timestamp = at !== undefined && at > Date.now() - LISTENING_MS ? await changedAt(repo, id) : undefined;
  if (timestamp === undefined) throw notFound(repo.model.name, id);
  return { timestamp };
}
