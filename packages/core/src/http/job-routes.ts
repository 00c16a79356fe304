import type { Router } from 'express';
import { forbidden } from '../auth/access-control';
import { mayReadJobResult } from '../core-hooks';
import { ApiError } from '../errors';
import { resultPage } from '../jobs/job-result';
import { parseListParams, queryOf } from './list-params';
import type { RepositoryLookup } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** Job fields a list leaves out unless `select` names them: a large upsert's result is megabytes. */
const HEAVY = new Set(['result']);

/**
 * `GET /Job` without `select` shows every field but `result`; `GET /Job/{id}/result` pages a
 * job's result (`offset`, `maxSize`, `status=Failed`), so a UI polls small answers.
 */
export function mountJobRoutes(router: Router, { lookup, maxListSize }: { lookup: RepositoryLookup; maxListSize: number }): void {
  router.get(
    '/Job',
    toHandler(async (req, res) => {
      const repository = lookup('Job');
      if (!repository) throw new ApiError('CORE_NOT_FOUND', "Unknown entity type 'Job'");
      const params = parseListParams(queryOf(req));
      const select = params.select ?? repository.model.fields.filter((f) => !f.def.writeOnly && !HEAVY.has(f.name)).map((f) => f.name);
      res.json(await repository.find(requestContext(req), { ...params, select }));
    }),
  );
  router.get(
    '/Job/:id/result',
    toHandler(async (req, res) => {
      const repository = lookup('Job');
      if (!repository) throw new ApiError('CORE_NOT_FOUND', "Unknown entity type 'Job'");
      const query = queryOf(req);
      const { offset = 0, maxSize = 200 } = parseListParams({ offset: query.offset, maxSize: query.maxSize });
      if (maxSize > maxListSize) throw new ApiError('CORE_INVALID_QUERY', `maxSize must not exceed ${maxListSize}`);
      const statuses = typeof query.status === 'string' ? query.status.split(',').map((s) => s.trim()).filter(Boolean) : [];
      if (query.status !== undefined && typeof query.status !== 'string') throw new ApiError('CORE_INVALID_QUERY', 'status must be a comma-separated list');
      const ctx = requestContext(req);
      const job = await repository.get(ctx, req.params.id as string, { select: ['result', 'createdBy'] });
      if (!mayReadJobResult(ctx, await repository.guard.access(ctx), job)) throw forbidden(`Only the user who started job '${job.id}' may read its result`);
      res.json(resultPage(job.result, { offset, maxSize, statuses }));
    }),
  );
}
