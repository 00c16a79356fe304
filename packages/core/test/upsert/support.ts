/** The upsert route of each generation, with its base path. */
export const UPSERT_PATHS = [
  ['A', '/api/upsert', '/api'],
  ['B', '/api/v1/MassActions/action/upsert', '/api/v1'],
] as const;

/** One item of an upsert answer. */
export interface UpsertResult {
  status: string;
  stored: boolean;
  entity?: Record<string, unknown>;
  message?: string;
}
