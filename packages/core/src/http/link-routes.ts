import type { Request, Router } from 'express';
import { assertKnownKeys, validationFailed } from '../errors';
import { parseQueryString } from './list-params';
import { repositoryFor, type RepositoryLookup } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/**
 * The ids a link route names: `{id}` or `{ids}` in the body, or (to unlink, where a client cannot
 * send a DELETE body) `?id=a,b`.
 */
function linkIds(req: Request, { query }: { query: boolean }): unknown[] {
  const body = req.body as unknown;
  if (query && (body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0))) {
    const id = parseQueryString(req.originalUrl).id;
    if (typeof id === 'string') return id.split(',').filter(Boolean);
    if (Array.isArray(id)) return id;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationFailed('The body must be {"id": …} or {"ids": […]}', [{ path: [], code: 'invalid_type', message: 'expected {id} or {ids}' }]);
  }
  assertKnownKeys(body, ['id', 'ids'], 'a link body');
  const { id, ids } = body as { id?: unknown; ids?: unknown };
  if ((id === undefined) === (ids === undefined)) throw validationFailed('Give either id or ids', [{ path: ['ids'], code: 'required', message: 'id or ids is required' }]);
  if (ids !== undefined && !Array.isArray(ids)) throw validationFailed('ids must be a list of record ids', [{ path: ['ids'], code: 'invalid_type', message: 'ids must be an array' }]);
  return ids === undefined ? [id] : (ids as unknown[]);
}

/** `POST /{Entity}/{id}/{link}` links records, `DELETE` on the same path unlinks them; both answer true. */
export function mountLinkRoutes(router: Router, lookup: RepositoryLookup): void {
  router.post(
    '/:entity/:id/:link',
    toHandler(async (req, res) => {
      const target = { id: req.params.id as string, link: req.params.link as string };
      await repositoryFor(lookup, req.params.entity).changeLinks(requestContext(req), { ...target, add: linkIds(req, { query: false }), ifMatch: req.get('if-match') });
      res.json(true);
    }),
  );
  router.delete(
    '/:entity/:id/:link',
    toHandler(async (req, res) => {
      const target = { id: req.params.id as string, link: req.params.link as string };
      await repositoryFor(lookup, req.params.entity).changeLinks(requestContext(req), { ...target, remove: linkIds(req, { query: true }), ifMatch: req.get('if-match') });
      res.json(true);
    }),
  );
}
