import { BootError, createEntityApi, defineEntity, type EntityApiOptions } from '@entity-records/core';
import { OPTIONS_SCHEMA } from '../../src/options-check';

const Brand = defineEntity({ name: 'Brand', fields: { name: { type: 'varchar' } } });

/** The BootError createEntityApi throws for these options (given untyped: TypeScript would refuse most). */
function bootError(options: Record<string, unknown>): BootError {
  try {
    createEntityApi({ database: 'sqlite::memory:', entities: [Brand], ...options } as unknown as EntityApiOptions);
  } catch (error) {
    if (error instanceof BootError) return error;
    throw error;
  }
  throw new Error('no error thrown');
}

type Schema = { properties?: Record<string, Schema> };

/** The schema's keys (at every level where it lists properties) that none of `values` gives. */
function missingKeys(schema: Schema, values: Record<string, unknown>[], prefix = ''): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([key, inner]) => {
    const giving = values.filter((v) => key in v).map((v) => v[key] as Record<string, unknown>);
    return giving.length ? missingKeys(inner, giving, `${prefix}${key}.`) : [`${prefix}${key}`];
  });
}

describe('createEntityApi checks its options at start-up', () => {
  it.each([
    [{ jobs: { queue: 'pgboss' } }, "option jobs.queue: 'pgboss' is not one of 'pg-boss', 'in-process' (did you mean 'pg-boss'?)", { option: 'jobs.queue', suggestion: 'pg-boss' }],
    [{ defaultListSize: 500, maxListSize: 100 }, 'option defaultListSize: 500 is above maxListSize 100: every list without maxSize would be refused', { option: 'defaultListSize' }],
    [{ defaultListSize: 2000 }, 'option defaultListSize: 2000 is above maxListSize 1000: every list without maxSize would be refused', { option: 'defaultListSize' }],
    [{ maxBodySize: 'lots' }, "option maxBodySize: 'lots' is no size: give bytes (1048576) or a size string ('32mb', '500kb')", { option: 'maxBodySize' }],
    [{ database: 'sqlite3:data.db' }, "option database: 'sqlite3:data.db' has the unknown scheme 'sqlite3:' (did you mean 'sqlite:'?); use sqlite:<path>, sqlite::memory: or postgres://user:password@host/database", { option: 'database', suggestion: 'sqlite' }],
    [{ database: 'mysql://root:secret@db/app' }, "option database: 'mysql://***@db/app' has the unknown scheme 'mysql:'; use sqlite:<path>, sqlite::memory: or postgres://user:password@host/database", { option: 'database' }],
    [{ maxListSzie: 10 }, "option maxListSzie: unknown option (did you mean 'maxListSize'?)", { option: 'maxListSzie', suggestion: 'maxListSize' }],
    [{ auth: { tokenLifetime: 2 } }, "option auth.tokenLifetime: unknown option (did you mean 'tokenLifetimeHours'?)", { option: 'auth.tokenLifetime' }],
    [{ admin: { userName: 'admin', password: '' } }, "option admin.password: '' must NOT have fewer than 1 characters", { option: 'admin.password' }],
    [{ jobs: { queue: 'pg-boss' } }, "option jobs.queue: 'pg-boss' keeps its queue in PostgreSQL: it needs a postgres:// database (use 'in-process' with SQLite)", { option: 'jobs.queue' }],
    [{ generations: ['C'] }, "option generations.0: 'C' is not one of 'A', 'B'", { option: 'generations.0' }],
    [{ publicUrl: 'pim.example.com' }, "option publicUrl: 'pim.example.com' must be an http:// or https:// address", { option: 'publicUrl' }],
    [{ logger: { info() {} } }, 'option logger: needs the functions info, warn and error (missing: warn, error)', { option: 'logger' }],
  ])('%j is CORE_CONFIG_INVALID naming the option', (options, message, details) => {
    const error = bootError(options);
    expect(error.code).toBe('CORE_CONFIG_INVALID');
    expect(error.message).toBe(`CORE_CONFIG_INVALID: ${message}`);
    expect(error.details).toMatchObject(details);
  });

  it('accepts every documented option with good values', async () => {
    const options = {
      database: 'sqlite::memory:',
      entities: [Brand],
      plugins: [],
      auth: { tokenLifetimeHours: 1, tokenIdleHours: 0, tokenCacheSeconds: 5, passwordCost: 14, throttle: { maxFailuresPerUser: 5, maxFailuresPerAddress: 50, windowSeconds: 30 }, passwordHashQueue: 10, resolveUser: () => undefined },
      admin: { userName: 'admin', password: 'a good password' },
      defaultListSize: 50,
      maxListSize: 100,
      maxBodySize: '10mb',
      maxConcurrentLargeBodies: 2,
      largeBodyQueue: 0,
      maxUpsertItems: 500,
      closeGraceMs: 0,
      statementTimeoutMs: 5000,
      poolTimeoutMs: 2000,
      publicUrl: 'https://pim.example.com',
      languages: ['en_US'],
      v1AttributesFormat: 'nested',
      generations: ['A'],
      apidocs: false,
      openapi: { title: 't', version: '1', description: 'd', apis: [], license: { name: 'MIT', identifier: 'MIT' }, contact: { name: 'n', url: 'https://example.com', email: 'a@example.com' } },
      logger: { info() {}, warn() {}, error() {} },
      poolSize: 2,
      changes: { retentionDays: 7 },
      events: { heartbeatSeconds: 5 },
      webhooks: { allowedHosts: ['hooks.internal'], maxAttempts: 3, retryBaseMs: 1000, timeoutMs: 2000, leaseMs: 5000, pollMs: 500, concurrency: 2, lookup: () => undefined },
      idempotency: { keepHours: 1, leaseSeconds: 30 },
      jobs: { queue: 'in-process', expireInSeconds: 60, worker: false, startDelayMs: 100 },
    } satisfies EntityApiOptions<[typeof Brand]>;
    // The license's url instead of its identifier (one or the other).
    const licensedByUrl = { ...options, openapi: { ...options.openapi, license: { name: 'MIT', url: 'https://opensource.org/license/mit' } } };
    // Every option of the schema (nested ones included) is given, so none is left untried.
    expect(missingKeys(OPTIONS_SCHEMA as Schema, [options, licensedByUrl])).toEqual([]);
    for (const good of [options, licensedByUrl]) await createEntityApi(good).close();
  });
});
