import { ApiError, definePlugin, requestContext, toHandler } from '@entity-records/core';
import { filesOf } from '@entity-records/files';
import type { SharingOptions } from './declarations';
import { sharingOpenApi } from './openapi';
import { publicLinkRoutes } from './public-link';
import { SharingEntity } from './sharing-entity';
import { SharingService } from './sharing-service';
import { SharingStore } from './sharing-store';

/**
 * The Sharing entity and its public links `/sharings/{id}.{ext}`, with expiry, usage limit and
 * password. Needs `@entity-records/files` registered before it.
 *
 * @example
 * createEntityApi({ database, entities, publicUrl, plugins: [files, sharing] })
 * @see docs/reference/sharing.md
 */
export const sharingPlugin = definePlugin<SharingOptions | undefined>({
  name: '@entity-records/sharing',
  dependencies: ['@entity-records/files'],
  setup(api, options) {
    const files = filesOf(api);
    const service = new SharingService(options ?? {}, api.instance);
    const store = new SharingStore(api.instance);
    api.addEntity(SharingEntity);
    service.installHooks(api);
    // The spec's create answer shows `deleted: false`; core's create route does not know that field.
    api.addRoutes((router) => {
      router.post('/Sharing', toHandler(async (req, res) => {
        const body: unknown = req.body ?? {};
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          throw new ApiError('CORE_VALIDATION_FAILED', 'The body must be a JSON object', { details: { issues: [] } });
        }
        const created = await api.instance().repository('Sharing').create(requestContext(req), body as Record<string, unknown>);
        res.json({ ...created, deleted: false });
      }));
    });
    api.addRootRoutes(publicLinkRoutes({ store, files, instance: api.instance }));
    api.addOpenApi(sharingOpenApi);
  },
});
