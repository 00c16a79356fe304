import { definePlugin, type PluginApi } from '@entity-records/core';
import { FILES_ERRORS } from './errors';
import { ChunkService } from './chunks';
import { UPLOAD_TABLES } from './chunk-store';
import { THUMBNAIL_SIZES, type FilesOptions, type StorageDriver } from './declarations';
import { FileEntity } from './file-entity';
import { FileService } from './file-service';
import { filesOpenApi } from './openapi';
import { resolveOptions } from './options';
import { fileRoutes } from './routes';
import { LocalStorage } from './storage/local-storage';

/** The file service of each instance being built, for plugins that serve files too (sharing). */
const SERVICES = new WeakMap<object, FileService>();

/**
 * The file service registered on this instance by `@entity-records/files` (list it first).
 *
 * @example
 * setup(api) { const files = filesOf(api); api.addRootRoutes((r) => r.get('/x/:id', …files.storage.read(…))) }
 */
export function filesOf(api: PluginApi): FileService {
  const service = SERVICES.get(api.instanceKey);
  if (!service) throw new Error("@entity-records/files must be registered before the plugins that use it");
  return service;
}

/** Removal of expired chunked uploads runs this often, in every process (the work is shared through the database). */
const SWEEP_MS = 60 * 60 * 1000;

/**
 * The File entity with its upload methods (base64, URL, chunks, multipart), downloads, thumbnails
 * and storage drivers.
 *
 * @example
 * createEntityApi({ database, entities, plugins: [[files, { storageDir: 'data/files' }]] })
 * @see docs/reference/files.md
 */
export const filesPlugin = definePlugin<FilesOptions | undefined>({
  name: '@entity-records/files',
  errors: FILES_ERRORS,
  dependencies: ['@entity-records/core'],
  setup(api, given) {
    const options = resolveOptions(given);
    const storage: StorageDriver = given?.storage ?? new LocalStorage(options.storageDir);
    const files = new FileService(storage, options, api.instance);
    const chunks = new ChunkService(files, api.instance);
    SERVICES.set(api.instanceKey, files);

    api.addEntity(FileEntity);
    for (const table of UPLOAD_TABLES) api.addTable(table);
    files.installHooks(api);
    api.addRawBodyPath('/File/upload');
    api.addRoutes(fileRoutes({ files, chunks, instance: api.instance }));
    api.addOpenApi(filesOpenApi);
    api.addAppMetadata({ thumbnailTypes: { ...THUMBNAIL_SIZES } });

    let sweeper: NodeJS.Timeout | undefined;
    const sweep = () => chunks.removeExpired().catch(() => undefined);
    api.onReady(async () => {
      await storage.open?.();
      void sweep();
      sweeper = setInterval(sweep, Math.min(SWEEP_MS, options.chunkExpiryMs)).unref();
    });
    api.onClose(async () => {
      if (sweeper) clearInterval(sweeper);
      await storage.close?.();
    });
  },
});
