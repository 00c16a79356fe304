import { definePlugin } from '@entity-records/core';
import { SHARING_ERRORS } from './errors';
import { filesOf } from '@entity-records/files';
import type { SharingOptions } from './declarations';
import { sharingOpenApi } from './openapi';
import { sharingLinks } from './links';
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
  errors: SHARING_ERRORS,
  dependencies: ['@entity-records/files'],
  setup(api, options) {
    const files = filesOf(api);
    const links = sharingLinks({ files, options: options ?? {}, instance: api.instance });
    const service = new SharingService(api.instance, links);
    const store = new SharingStore(api.instance);
    api.addEntity(SharingEntity);
    service.installHooks(api);
    api.addRootRoutes(publicLinkRoutes({ store, files, instance: api.instance }));
    api.addOpenApi(sharingOpenApi);
  },
});
