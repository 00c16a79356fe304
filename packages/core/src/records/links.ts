import type { RequestContext } from '../context';
import type { LinkField } from '../definition/model';
import { ApiError } from '../errors';
import { checkedLinkIds, linkNamed } from './link-delta';
import type { Repository } from './repository';
import { updateRecord, type Preconditions } from './update';

/** Tries of a link change whose record another request wrote meanwhile. */
const LINK_ATTEMPTS = 5;

/** The ids a link route names: a non-empty list of record ids (400 otherwise). */
function checkedIds(field: LinkField, ids: readonly unknown[], adding: boolean): string[] {
  return checkedLinkIds(field, { ids, adding, path: ['ids'] });
}

/**
 * Links (`add`) or unlinks (`remove`) records through one link of a record: an update of that link
 * alone, with every rule of an update (the edit right on the record and on the link field, link
 * targets that exist and that the caller may read), logged as `Relate` or `Unrelate`. Adding an id
 * already linked, or removing one not linked, changes nothing.
 */
export async function changeLinks(repo: Repository, ctx: RequestContext, change: LinkChange): Promise<void> {
  const { id, link, add, remove, ifMatch, ifNoneMatch } = change;
  const field = linkNamed(repo.model, link);
  const links = [add ? { field, add: checkedIds(field, add, true) } : { field, remove: checkedIds(field, remove ?? [], false) }];
  for (let attempt = 1; ; attempt++) {
    try {
      return void (await updateRecord(repo, ctx, { id, body: {}, links, answer: false, ifMatch, ifNoneMatch }));
    } catch (error) {
      // Another request wrote the record between the read and the write: read it again (unless
      // the client named versions: then that is its answer, 412).
      if (ifMatch !== undefined || ifNoneMatch !== undefined || attempt >= LINK_ATTEMPTS || !(error instanceof ApiError) || error.code !== 'CORE_PRECONDITION_FAILED') throw error;
    }
  }
}

/** One link route's change of one record: ids to link or to unlink, and the client's `If-Match` and `If-None-Match`. */
export interface LinkChange extends Preconditions {
  id: string;
  link: string;
  add?: readonly unknown[];
  remove?: readonly unknown[];
}
