import type { EntityApiOptions } from '@entity-records/core';
import { readConfig } from './config';
import { pimOptions } from './options';

/**
 * For `entity-records schema-diff --config dist/schema-config.js`: the options the server
 * would start with, from the same environment (`DATABASE_URL`, …).
 */
export default function schemaConfig(): EntityApiOptions {
  return pimOptions(readConfig());
}
