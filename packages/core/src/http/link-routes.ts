import type { Request, Router } from 'express';
import { assertKnownKeys, validationFailed, withIssues } from '../errors';
import { queryOf } from './list-params';
import { preconditionsOf, repositoryFor, type RepositoryLookup } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/**
 * The ids a link route names: `{id}` or `{ids}` in the body, or (to unlink, where a client cannot
 * send a DELETE body) `?id=a,b`.
 */
function linkIds(req: Request, { query }: { query: boolean }): { ids: unknown[]; single?: true } {
  const body = req.body as unknown;
  if (query && (body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0))) {
    const id = queryOf(req).id;
    if (typeof id === 'string') return { ids: id.split(',').filter(Boolean) };
    if (Array.isArray(id)) return { ids: id };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationFailed('The body must be {"id": …} or {"ids": […]}', [{ path: [], code: 'invalid_type', message: 'expected {id} or {ids}' }]);
  }
  assertKnownKeys(body, ['id', 'ids'], 'a link body');
  const { id, ids } = body as { id?: unknown; ids?: unknown };
  if ((id === undefined) === (ids === undefined)) throw validationFailed('Give either id or ids', [{ path: ['ids'], code: 'required', message: 'id or ids is required' }]);
  if (ids !== undefined && !Array.isArray(ids)) throw validationFailed('ids must be a list of record ids', [{ path: ['ids'], code: 'invalid_type', message: 'ids must be an array' }]);
  return ids === undefined ? { ids: [id], single: true } : { ids: ids as unknown[] };
}

/** An issue of the one id of `{id}` (checked as `ids[0]`) named as the body sent it: `["id"]`. */
function asSent(error: unknown, { single }: { single?: true }): unknown {
  if (!single) return error;
  return withIssues(
    error,
    (issue) => (issue.path[0] === 'ids' && issue.path[1] === 0 ? { ...issue, path: ['id', ...issue.path.slice(2)], message: 'id must be a record id' } : issue),
    (message) => message.replace(/^ids must be record ids$/, 'id must be a record id'),
  );
}

/** Links (`add`) or unlinks the ids a link route names, its issues named as the body sent them. */
async function changeLinks(lookup: RepositoryLookup, req: Request, kind: 'add' | 'remove'): Promise<void> {
  const repository = repositoryFor(lookup, req.params.entity);
  const named = linkIds(req, { query: kind === 'remove' });
  const target = { id: req.params.id as string, link: req.params.link as string };
  await repository.changeLinks(requestContext(req), { ...target, [kind]: named.ids, ...preconditionsOf(req) }).catch((error: unknown) => {
    throw asSent(error, named);
  });
}

/** `POST /{Entity}/{id}/{link}` links records, `DELETE` on the same path unlinks them; both answer true. */
export function mountLinkRoutes(router: Router, lookup: RepositoryLookup): void {
  router.post(
    '/:entity/:id/:link',
    toHandler(async (req, res) => {
      await changeLinks(lookup, req, 'add');
      res.json(true);
    }),
  );
  router.delete(
    '/:entity/:id/:link',
    toHandler(async (req, res) => {
      await changeLinks(lookup, req, 'remove');
      res.json(true);
    }),
  );
}
