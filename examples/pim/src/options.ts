import type { EntityApiOptions } from '@entity-records/core';
import files from '@entity-records/files';
import sharing from '@entity-records/sharing';
import type { PimConfig } from './config';
import { pimEntities } from './entities';

/** The instance options of the example: one place for the server and the schema diff command. */
export function pimOptions(config: PimConfig): EntityApiOptions {
  return {
    database: config.databaseUrl,
    entities: pimEntities,
    publicUrl: config.publicUrl,
    languages: config.languages,
    openapi: { title: 'PIM example', version: '0.1.0' },
    plugins: [[files, { storageDir: config.storageDir, fileUrlAllowedHosts: config.fileUrlAllowedHosts }], sharing],
  };
}
