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
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `1`/`true`/`yes` or `0`/`false`/`no`; anything else is a mistake worth stopping for. */
function flag(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`${name} must be 1 or 0 (true or false), not '${value}'`);
}

const list = (value: string | undefined, fallback: string[]) =>
  value === undefined ? fallback : value.split(',').map((s) => s.trim()).filter(Boolean);

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
  };
}
