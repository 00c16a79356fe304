import type { UserAccess } from '../auth/access-control';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel } from '../definition/model';
import { ApiError } from '../errors';
import { judgedOnOtherSide } from './counterparts';
import { linkNamed } from './link-delta';
import { assertHoldingWritable, holdingLink } from './link-rules';
import type { Repository } from './repository';
import { assertMay, checkFields } from './write-rules';

/** What `unlinkRule` tells of a link the routes let the caller unlink from: whether each listed record is judged too. */
interface Unlinking {
  /** The type of the listed records when unlinking writes them too (`judgedOnOtherSide`). */
  listed?: EntityModel;
}

/**
 * Whether `DELETE /{Entity}/{id}/{link}` lets the caller take records off `link` at all, whatever
 * the records: the checks of that route that depend on the caller and the link alone, made with
 * the route's own functions. A system link (`createdBy`, `modifiedBy`) is no link a route writes
 * (404); the caller must be allowed to edit the type (403); a single link is emptied and a
 * multiple link loses an id, as an update sends them, so a required single link refuses (400)
 * and so does a read-only link (400), and the field rights (the field and its other side) and
 * the right on the type whose records a multiple link changes too are those of an update (403);
 * a one-to-many list writes each listed record's single link, which the caller must be allowed
 * to edit (403) and which may be neither read-only nor required (400). Undefined when the route
 * refuses.
 */
function unlinkRule(repo: Repository, access: UserAccess, link: string): Unlinking | undefined {
  const { model, env } = repo;
  try {
    const field = linkNamed(model, link);
    assertMay(model, access, 'edit');
    const single = field.type === 'link';
    const values = repo.validate({ [field.key]: single ? null : [] }, 'update');
    // Any record held is taken off: the stored value differs from what the update sends.
    checkFields(model, access, { values, sent: [field], existing: { [field.key]: single ? '' : [''] } });
    if (single || !judgedOnOtherSide(env.schema, field)) return {};
    const listed = env.schema.entity(field.target) as EntityModel;
    assertMay(listed, access, 'edit');
    const holding = holdingLink(listed, field);
    if (holding) assertHoldingWritable(access, { target: listed, holding, removes: true });
    return { listed };
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
}

/**
 * For each of `listed`, whether the caller may take it off `link` of the record `from` through
 * the link routes (`_meta.permissions.unlink`): the link allows it (`unlinkRule`), `from` is a
 * record the caller may edit, and so is each listed record where unlinking writes it too (a
 * one-to-many list, a many-to-many pair whose other side its type declares). Records need the
 * keys `Repository.permits` reads.
 */
export async function permitsUnlinking(repo: Repository, ctx: RequestContext, { link, from, listed }: { link: string; from: ApiRecord; listed: readonly ApiRecord[] }): Promise<boolean[]> {
  const rule = unlinkRule(repo, await repo.guard.access(ctx), link);
  if (!rule || !(await repo.permits(ctx, 'edit', from))) return listed.map(() => false);
  if (!rule.listed) return listed.map(() => true);
  const other = repo.env.repository(rule.listed.name);
  const out: boolean[] = [];
  for (const record of listed) out.push(await other.permits(ctx, 'edit', record));
  return out;
}
