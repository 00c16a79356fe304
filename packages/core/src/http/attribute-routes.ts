import type { Request, Router } from 'express';
import type { AttributeEndpoints } from '../attributes/endpoints';
import { parseQueryString } from './list-params';
import { assertNoneMatch, repositoryFor, type RepositoryLookup } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** The body of DELETE …/attributeValues; clients that cannot send a DELETE body may use `?attributeIds=a,b`. */
function deleteBody(req: Request): unknown {
  const body = req.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && 'attributeIds' in body) return body;
  const ids = parseQueryString(req.originalUrl).attributeIds;
  if (typeof ids === 'string') return { attributeIds: ids.split(',').filter(Boolean) };
  if (Array.isArray(ids)) return { attributeIds: ids };
  return body;
}

/** The four simple attribute endpoints of the spec, the same in both generations. */
export function mountAttributeRoutes(router: Router, lookup: RepositoryLookup, endpoints: AttributeEndpoints): void {
  // Writes honour If-Match as an update does (CONTRACT §16), whichever route they take.
  const target = (req: Request) => ({ ctx: requestContext(req), repo: repositoryFor(lookup, req.params.entity), id: req.params.id as string, ifMatch: req.get('if-match') });
  // And If-None-Match, as an update does: 412 while the record is at a version it names.
  const writeTarget = async (req: Request) => {
    const found = target(req);
    await assertNoneMatch(found.repo, req);
    return found;
  };
  router.get(
    '/:entity/:id/attributeValues',
    toHandler(async (req, res) => {
      res.json(await endpoints.values(target(req)));
    }),
  );
  router.post(
    '/:entity/:id/addAttributes',
    toHandler(async (req, res) => {
      res.json(await endpoints.add(await writeTarget(req), req.body));
    }),
  );
  router.post(
    '/:entity/:id/upsertAttributeValues',
    toHandler(async (req, res) => {
      res.json(await endpoints.upsert(await writeTarget(req), req.body));
    }),
  );
  router.delete(
    '/:entity/:id/attributeValues',
    toHandler(async (req, res) => {
      res.json(await endpoints.remove(await writeTarget(req), deleteBody(req)));
    }),
  );
}
