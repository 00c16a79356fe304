import path from 'node:path';

/** The example's settings, from the environment (CONTRACT.md §13). */
export interface PimConfig {
  port: number;
  host: string;
  databaseUrl: string;
  storageDir: string;
  publicUrl: string;
  adminUserName: string;
  adminPassword?: string;
  languages: string[];
  fileUrlAllowedHosts: string[];
  /** Brands, categories and products with attributes and images on a database without any (DEMO_DATA). */
  demoData: boolean;
  /** pino's level of the instance's log lines on stdout (LOG_LEVEL). */
  logLevel: string;
  /** Limits (CONTRACT §17), each from its variable when set; unset ones keep the library's defaults. */
  limits: PimLimits;
  /** log2 of scrypt's N for new password hashes (PASSWORD_COST); unset keeps the library's 17. */
  passwordCost?: number;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `1`/`true`/`yes` or `0`/`false`/`no`; anything else is a mistake worth stopping for. */
function flag(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`${name} must be 1 or 0 (true or false), not '${value}'`);
}

/** The limits the environment may set; see docs/guide/production.md. */
export interface PimLimits {
  maxBodySize?: string;
  maxUpsertItems?: number;
  closeGraceMs?: number;
  statementTimeoutMs?: number;
  poolSize?: number;
  poolTimeoutMs?: number;
  passwordHashQueue?: number;
  maxConcurrentLargeBodies?: number;
  largeBodyQueue?: number;
  maxConcurrentUrlImports?: number;
  urlImportQueue?: number;
}

/** A whole number from a variable, or undefined when it is unset or empty; anything else stops the start. */
function whole(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value.trim())) throw new Error(`${name} must be a whole number, not '${value}'`);
  return Number(value);
}

function readLimits(env: NodeJS.ProcessEnv): PimLimits {
  return {
    maxBodySize: env.MAX_BODY_SIZE || undefined,
    maxUpsertItems: whole(env, 'MAX_UPSERT_ITEMS'),
    closeGraceMs: whole(env, 'CLOSE_GRACE_MS'),
    statementTimeoutMs: whole(env, 'STATEMENT_TIMEOUT_MS'),
    poolSize: whole(env, 'POOL_SIZE'),
    poolTimeoutMs: whole(env, 'POOL_TIMEOUT_MS'),
    passwordHashQueue: whole(env, 'PASSWORD_HASH_QUEUE'),
    maxConcurrentLargeBodies: whole(env, 'MAX_CONCURRENT_LARGE_BODIES'),
    largeBodyQueue: whole(env, 'LARGE_BODY_QUEUE'),
    maxConcurrentUrlImports: whole(env, 'MAX_CONCURRENT_URL_IMPORTS'),
    urlImportQueue: whole(env, 'URL_IMPORT_QUEUE'),
  };
}

/** A comma list; unset, empty or only commas and spaces, the fallback (an empty value is no value). */
function list(value: string | undefined, fallback: string[]): string[] {
  const items = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return items.length ? items : fallback;
}

function logLevel(value: string | undefined): string {
  if (!value) return 'info';
  if (!LOG_LEVELS.includes(value)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not '${value}'`);
  return value;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): PimConfig {
  const dataDir = path.resolve(__dirname, '..', 'data');
  // An empty value is no value, as for every setting.
  const port = Number(env.PORT || 3000);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || `sqlite:${path.join(dataDir, 'pim.sqlite')}`,
    storageDir: env.STORAGE_DIR || path.join(dataDir, 'files'),
    publicUrl: (env.PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, ''),
    adminUserName: env.ADMIN_USERNAME || 'admin',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    languages: list(env.LANGUAGES, ['en_US', 'de_DE']),
    fileUrlAllowedHosts: list(env.FILE_URL_ALLOWED_HOSTS, []),
    // Only the default database starts with demo data: one named by DATABASE_URL starts empty.
    demoData: flag('DEMO_DATA', env.DEMO_DATA, !env.DATABASE_URL),
    logLevel: logLevel(env.LOG_LEVEL),
    limits: readLimits(env),
    passwordCost: whole(env, 'PASSWORD_COST'),
  };
}
