import type { RequestContext } from '../context';
import type { FieldModel } from '../definition/model';
import type { LinkScopes } from '../sql/link-rows';
import type { Repository } from './repository';
import { rowFilter, type RowFilter } from './row-rules';

/**
 * What a reader sees in the one-to-many lists of a record (`Brand.productsIds`, `productsNames`):
 * the list is not the record's own value but the records of the target type that link to it, so
 * it shows those the reader may read (under `own`, the reader's own; under row rules, those they
 * keep), as the linked-records route and a list of the target type do. A role that reads none of
 * the target type does not read the list at all (`mayReadField`). Links the record stores itself
 * (a single link, both sides of a many-to-many link) show as stored.
 *
 * Undefined when every list shows all it links (admins, the system, `read: all` without rules).
 */
export async function linkScopes(repo: Repository, ctx: RequestContext, fields: readonly FieldModel[]): Promise<LinkScopes | undefined> {
  if (!ctx.user) return undefined;
  const access = await repo.guard.access(ctx);
  if (access.unrestricted) return undefined;
  let scopes: Map<FieldModel, RowFilter> | undefined;
  for (const field of fields) {
    if (field.type !== 'linkMultiple' || field.linkKind !== 'hasMany') continue;
    const target = repo.env.repository(field.target);
    const own = access.scope(field.target).read === 'own';
    const rules = await rowFilter(target, ctx);
    if (!own && !rules) continue;
    scopes ??= new Map<FieldModel, RowFilter>();
    scopes.set(field, (qb) => {
      if (own) target.guard.ownOnly(ctx, qb);
      rules?.(qb);
    });
  }
  return scopes;
}
