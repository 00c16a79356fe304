import type { Request, Router } from 'express';
import type { AttributeEndpoints } from '../attributes/endpoints';
import { queryOf } from './list-params';
import { preconditionsOf, repositoryFor, type RepositoryLookup } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** The body of DELETE …/attributeValues; clients that cannot send a DELETE body may use `?attributeIds=a,b`. */
function deleteBody(req: Request): unknown {
  const body = req.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && 'attributeIds' in body) return body;
  const ids = queryOf(req).attributeIds;
  if (typeof ids === 'string') return { attributeIds: ids.split(',').filter(Boolean) };
  if (Array.isArray(ids)) return { attributeIds: ids };
  return body;
}

/** The four simple attribute endpoints of the spec, the same in both generations. */
export function mountAttributeRoutes(router: Router, lookup: RepositoryLookup, endpoints: AttributeEndpoints): void {
  // Writes honour If-Match and If-None-Match as an update does (CONTRACT §16), judged after the
  // rights and the body, whichever route they take.
  const target = (req: Request) => ({
    ctx: requestContext(req),
    repo: repositoryFor(lookup, req.params.entity),
    id: req.params.id as string,
    ...preconditionsOf(req),
  });
  router.get(
    '/:entity/:id/attributeValues',
    toHandler(async (req, res) => {
      res.json(await endpoints.values(target(req)));
    }),
  );
  router.post(
    '/:entity/:id/addAttributes',
    toHandler(async (req, res) => {
      res.json(await endpoints.add(target(req), req.body));
    }),
  );
  router.post(
    '/:entity/:id/upsertAttributeValues',
    toHandler(async (req, res) => {
      res.json(await endpoints.upsert(target(req), req.body));
    }),
  );
  router.delete(
    '/:entity/:id/attributeValues',
    toHandler(async (req, res) => {
      res.json(await endpoints.remove(target(req), deleteBody(req)));
    }),
  );
}
