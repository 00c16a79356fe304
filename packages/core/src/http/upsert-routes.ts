import type { Request, Router } from 'express';
import { ApiError } from '../errors';
import { upsertItems } from '../sql/upsert';
import type { RepositoryLookup } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** The body of an upsert: an array of `{entity, payload}` items. */
export function upsertBody(req: Request): unknown[] {
  if (!Array.isArray(req.body)) {
    throw new ApiError('CORE_VALIDATION_FAILED', 'The body must be an array of {entity, payload} items', {
      details: { issues: [{ path: [], code: 'invalid_type', message: 'expected an array' }] },
    });
  }
  return req.body as unknown[];
}

/** `POST /upsert` (both generations) and `POST /MassActions/action/upsert` (generation B). */
export function mountUpsertRoutes(router: Router, lookup: RepositoryLookup, generation: 'A' | 'B'): void {
  const upsert = toHandler(async (req, res) => {
    res.json(await upsertItems(lookup, requestContext(req), upsertBody(req)));
  });
  router.post('/upsert', upsert);
  if (generation === 'B') router.post('/MassActions/action/upsert', upsert);
}
