import type { EntityApiOptions } from '@entity-records/core';
import pino from 'pino';
import files from '@entity-records/files';
import sharing from '@entity-records/sharing';
import meta from '@entity-records/meta';
import multilang from '@entity-records/multilang';
import type { PimConfig } from './config';
import { pimEntities } from './entities';
import { HEALTH_OPENAPI_FILES } from './health';

/** The instance options of the example: one place for the server and the schema diff command. */
export function pimOptions(config: PimConfig): EntityApiOptions {
  const { limits } = config;
  const importLimits = { maxConcurrentUrlImports: limits.maxConcurrentUrlImports, urlImportQueue: limits.urlImportQueue };
  return {
    database: config.databaseUrl,
    maxBodySize: limits.maxBodySize,
    maxUpsertItems: limits.maxUpsertItems,
    closeGraceMs: limits.closeGraceMs,
    statementTimeoutMs: limits.statementTimeoutMs,
    poolSize: limits.poolSize,
    poolTimeoutMs: limits.poolTimeoutMs,
    maxConcurrentLargeBodies: limits.maxConcurrentLargeBodies,
    largeBodyQueue: limits.largeBodyQueue,
    auth: { passwordHashQueue: limits.passwordHashQueue, passwordCost: config.passwordCost },
    entities: pimEntities,
    // JSON lines on stdout: start-up, schema steps, jobs and client errors at info, SQL at debug.
    logger: pino({ level: config.logLevel }),
    publicUrl: config.publicUrl,
    // The first language is the main one; multilang gives every other one its field variants
    // (nameDeDE), ExtensibleEnumOption.name included.
    languages: config.languages,
    // Webhooks may reach the hosts URL uploads may (FILE_URL_ALLOWED_HOSTS): one allow-list for
    // every request the server makes to a URL a client gave.
    webhooks: { allowedHosts: config.fileUrlAllowedHosts },
    openapi: {
      title: 'PIM example',
      version: '0.1.0',
      apis: HEALTH_OPENAPI_FILES,
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { name: 'The entity-records project' },
    },
    // Without languages (LANGUAGES set empty) nothing is multilingual.
    plugins: [
      [files, { storageDir: config.storageDir, fileUrlAllowedHosts: config.fileUrlAllowedHosts, ...importLimits }],
      sharing,
      ...(config.languages.length ? [multilang] : []),
      meta,
    ],
  };
}
