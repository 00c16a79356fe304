import Ajv, { type ErrorObject } from 'ajv';
import { BootError } from './errors';
import { didYouMean, nearestName } from './util/nearest';

/** A size as express.json() reads it: bytes, or a number with b, kb, mb, gb, tb or pb. */
const SIZE = '^\\d+(\\.\\d+)?\\s*([bB]|[kKmMgGtTpP][bB])?$';
const count = (minimum = 1) => ({ type: 'integer', minimum });
const hours = { type: 'number', minimum: 0 };
const object = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', additionalProperties: false, required, properties });
/** Functions and objects holding functions: checked by hand below, ajv sees only their presence. */
const anything = {};

/** The JSON Schema of `EntityApiOptions`; the keys are every option there is. */
export const OPTIONS_SCHEMA = object(
  {
    database: { type: 'string', minLength: 1 },
    entities: { type: 'array' },
    plugins: { type: 'array' },
    auth: object({
      tokenLifetimeHours: hours,
      tokenIdleHours: hours,
      tokenCacheSeconds: { type: 'number', minimum: 0 },
      passwordCost: { type: 'integer', minimum: 14, maximum: 20 },
      throttle: object({ maxFailuresPerUser: count(), maxFailuresPerAddress: count(), windowSeconds: count() }),
      passwordHashQueue: count(0),
      resolveUser: anything,
    }),
    admin: object({ userName: { type: 'string', minLength: 1 }, password: { type: 'string', minLength: 1 } }, ['userName']),
    defaultListSize: count(),
    maxListSize: count(),
    maxBodySize: { anyOf: [count(), { type: 'string', pattern: SIZE }] },
    maxConcurrentLargeBodies: count(),
    largeBodyQueue: count(0),
    maxUpsertItems: count(),
    closeGraceMs: count(0),
    statementTimeoutMs: count(0),
    poolTimeoutMs: count(),
    publicUrl: { type: 'string', pattern: '^https?://[^/]' },
    languages: { type: 'array', items: { type: 'string' } },
    v1AttributesFormat: { enum: ['none', 'nested'] },
    generations: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['A', 'B'] } },
    apidocs: { type: 'boolean' },
    openapi: object({
      title: { type: 'string' },
      version: { type: 'string' },
      description: { type: 'string' },
      apis: { type: 'array', items: { type: 'string' } },
      license: object({ name: { type: 'string', minLength: 1 }, identifier: { type: 'string' }, url: { type: 'string' } }, ['name']),
      contact: object({ name: { type: 'string' }, url: { type: 'string' }, email: { type: 'string' } }),
    }),
    logger: anything,
    poolSize: count(),
    changes: object({ retentionDays: { type: 'number', exclusiveMinimum: 0 } }),
    events: object({ heartbeatSeconds: { type: 'number', exclusiveMinimum: 0 } }),
    webhooks: object({
      allowedHosts: { type: 'array', items: { type: 'string' } },
      maxAttempts: count(),
      retryBaseMs: count(),
      timeoutMs: count(),
      leaseMs: count(),
      pollMs: count(),
      concurrency: count(),
      lookup: anything,
    }),
    idempotency: object({ keepHours: { type: 'number', exclusiveMinimum: 0 }, leaseSeconds: { type: 'number', exclusiveMinimum: 0 } }),
    jobs: object({ queue: { enum: ['pg-boss', 'in-process'] }, expireInSeconds: count(), worker: { type: 'boolean' }, startDelayMs: { type: 'integer', minimum: 0, maximum: 60_000 } }),
  },
  ['database', 'entities'],
);

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
const validate = ajv.compile(OPTIONS_SCHEMA);

const invalid = (option: string, message: string, details: Record<string, unknown> = {}): BootError =>
  new BootError('CORE_CONFIG_INVALID', `option ${option}: ${message}`, { option, ...details });

/** `jobs.queue` from ajv's `/jobs/queue`. */
const optionName = (error: ErrorObject, key?: string) =>
  [...error.instancePath.split('/').slice(1), ...(key === undefined ? [] : [key])].filter(Boolean).join('.') || 'options';

const shown = (value: unknown) => (typeof value === 'string' ? `'${value}'` : JSON.stringify(value));

/** The first schema error, as a sentence that names the option and, for a typo, what was meant. */
function describe(error: ErrorObject): BootError {
  if (error.keyword === 'additionalProperties') {
    const key = (error.params as { additionalProperty: string }).additionalProperty;
    const known = Object.keys((error.parentSchema as { properties: object }).properties);
    const suggestion = nearestName(key, known);
    return invalid(optionName(error, key), `unknown option${didYouMean(key, known)}`, { suggestion });
  }
  const option = optionName(error);
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    const strings = allowed.filter((v): v is string => typeof v === 'string');
    const suggestion = typeof error.data === 'string' ? nearestName(error.data, strings) : undefined;
    const hint = suggestion === undefined ? '' : ` (did you mean '${suggestion}'?)`;
    return invalid(option, `${shown(error.data)} is not one of ${allowed.map(shown).join(', ')}${hint}`, { suggestion });
  }
  if (option === 'maxBodySize') return invalid(option, `${shown(error.data)} is no size: give bytes (1048576) or a size string ('32mb', '500kb')`);
  if (option === 'publicUrl') return invalid(option, `${shown(error.data)} must be an http:// or https:// address`);
  return invalid(option, `${shown(error.data)} ${error.message ?? 'is invalid'}`);
}

const SCHEMES = ['sqlite', 'postgres', 'postgresql'];

/** A database URL names SQLite or PostgreSQL; `sqlite3:x.db` would otherwise become a file of that name. */
function checkDatabase(url: string): void {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1];
  // A single letter is a Windows drive (`C:\data\app.db`), a bare file path.
  if (scheme === undefined || scheme.length === 1 || SCHEMES.includes(scheme)) return;
  const safe = url.replace(/\/\/[^@/]*@/, '//***@');
  const suggestion = nearestName(scheme, SCHEMES);
  const hint = suggestion === undefined ? '' : ` (did you mean '${suggestion}:'?)`;
  throw invalid('database', `'${safe}' has the unknown scheme '${scheme}:'${hint}; use sqlite:<path>, sqlite::memory: or postgres://user:password@host/database`, { suggestion });
}

/** What one option's schema cannot say: sizes that must agree, functions, a queue that needs PostgreSQL. */
function checkCombinations(options: Record<string, unknown>): void {
  const defaultListSize = (options.defaultListSize as number | undefined) ?? 200;
  const maxListSize = (options.maxListSize as number | undefined) ?? 1000;
  if (defaultListSize > maxListSize) {
    throw invalid('defaultListSize', `${defaultListSize} is above maxListSize ${maxListSize}: every list without maxSize would be refused`);
  }
  const logger = options.logger as Record<string, unknown> | undefined;
  const missing = ['info', 'warn', 'error'].filter((level) => typeof logger?.[level] !== 'function');
  if (logger !== undefined && missing.length) throw invalid('logger', `needs the functions info, warn and error (missing: ${missing.join(', ')})`);
  const resolveUser = (options.auth as { resolveUser?: unknown } | undefined)?.resolveUser;
  if (resolveUser !== undefined && typeof resolveUser !== 'function') throw invalid('auth.resolveUser', 'must be a function of the request');
  const lookup = (options.webhooks as { lookup?: unknown } | undefined)?.lookup;
  if (lookup !== undefined && typeof lookup !== 'function') throw invalid('webhooks.lookup', 'must be a name lookup function (as dns.lookup)');
  const queue = (options.jobs as { queue?: string } | undefined)?.queue;
  if (queue === 'pg-boss' && !/^postgres(ql)?:\/\//.test(options.database as string)) {
    throw invalid('jobs.queue', "'pg-boss' keeps its queue in PostgreSQL: it needs a postgres:// database (use 'in-process' with SQLite)");
  }
}

/**
 * Checks the options of `createEntityApi` before anything is built: an unknown option, a value of
 * the wrong kind or out of range, and options that contradict each other each throw a `BootError`
 * (`CORE_CONFIG_INVALID`) naming the option and, for a typo, the name that was meant.
 */
export function checkOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null) throw invalid('options', 'createEntityApi needs an options object');
  if (!validate(options)) {
    const errors = validate.errors ?? [];
    // The most telling error first: an unknown key or a wrong value, before anyOf's summary.
    const first = errors.find((e) => e.keyword !== 'anyOf') ?? errors[0];
    throw describe(first);
  }
  const checked = options as Record<string, unknown>;
  checkDatabase(checked.database as string);
  checkCombinations(checked);
}
