import type { RequestHandler, Router } from 'express';
import type { AuthOptions, AuthService } from './auth/auth-service';
import type { LoginThrottle } from './auth/login-throttle';
import type { V1AttributesFormat } from './attributes/service';
import type { ApiRecord, CreateBody, EntityDefinition, RecordOf, UpdateBody } from './declarations';
import type { RequestContext } from './context';
import type { JobHandler } from './jobs/job-service';
import type { SchemaModel } from './definition/normalize';
import type { Logger } from './logger';
import type { Languages } from './languages';
import type { LookupFunction } from 'node:net';
import type { PluginEntry } from './plugin';
import type { Database } from './sql/database';
import type { Repository } from './records/repository';
import type { SchemaStep } from './sql/schema-sync';

export interface EntityApiOptions<TEntities extends readonly EntityDefinition[] = readonly EntityDefinition[]> {
  /** `sqlite::memory:`, `sqlite:<path>` or `postgres://…`. */
  database: string;
  /** The host's entity definitions; `api.repository(name)` is typed from them. */
  entities: TEntities;
  plugins?: readonly PluginEntry[];
  auth?: AuthOptions;
  /**
   * Created on start when no user of that name exists. Without a password one is generated and
   * logged once (level warn), so that it is never lost.
   */
  admin?: { userName: string; password?: string };
  /** The path generations served: `['A']` (`/api/`), `['B']` (`/api/v1/`); default both. */
  generations?: readonly ('A' | 'B')[];
  /** Whether the router serves `/apidocs/` and `/apidocs/openapi.json`; default true. */
  apidocs?: boolean;
  /** Default page size of lists; default 200. */
  defaultListSize?: number;
  /** Largest `maxSize`; default 1000. */
  maxListSize?: number;
  /** Largest JSON body; default `32mb`. */
  maxBodySize?: string | number;
  /**
   * JSON bodies over 1 MiB (or of unknown length) read and handled at once: each is in memory
   * several times over while it is (a base64 file, a large upsert). Default 4.
   */
  maxConcurrentLargeBodies?: number;
  /** Large bodies that may wait for a place; any more are 503 `CORE_BUSY`. Default 64. */
  largeBodyQueue?: number;
  /** Items a synchronous upsert takes at most (more: 413; `upsertAsync` takes any number); default 10,000. */
  maxUpsertItems?: number;
  /**
   * `close()` (SIGTERM in a host that calls it): how long the requests in flight may take to
   * finish before jobs stop and the pool closes, in ms; default 10,000.
   */
  closeGraceMs?: number;
  /** PostgreSQL: the longest a statement may run, in ms (then 503 `CORE_TIMEOUT`); default 30,000; 0 = no limit. */
  statementTimeoutMs?: number;
  /** How long a request waits for a free database connection, in ms (then 503); default 10,000. */
  poolTimeoutMs?: number;
  /** The address clients reach the instance at (links in responses). */
  publicUrl?: string;
  /**
   * Languages of the instance, main first (`['en_US', 'de_DE']`): shown in metadata, accepted in
   * the `language` header, and the languages of multilingual fields (`@entity-records/multilang`).
   */
  languages?: string[];
  /**
   * Generation B without `Flatten-Attributes: true`: no attributes (`'none'`, default) or the
   * earlier variant's `attributesValues` array on every record (`'nested'`).
   */
  v1AttributesFormat?: V1AttributesFormat;
  openapi?: {
    title?: string;
    version?: string;
    description?: string;
    /** Files (globs) of the host's own routes whose `@openapi` JSDoc blocks join the document. */
    apis?: string[];
    /** `info.license` of the document: `{ name, identifier? }` (an SPDX id) or `{ name, url? }`. */
    license?: { name: string; identifier?: string; url?: string };
    /** `info.contact` of the document. */
    contact?: { name?: string; url?: string; email?: string };
  };
  logger?: Logger;
  /** PostgreSQL pool size; default 10. */
  poolSize?: number;
  /** The change log (CONTRACT §16). */
  changes?: {
    /** Days a change is kept (the record stream and `Last-Event-ID` replay reach this far back); default 30. */
    retentionDays?: number;
  };
  /** `Idempotency-Key` on creates, upserts, mass updates and uploads (CONTRACT §16). */
  idempotency?: {
    /** Hours an answer is kept and replayed for its key; default 24. */
    keepHours?: number;
    /**
     * Seconds a running request's hold on its key lasts without renewal (it renews every third of
     * it); a key whose process died is free again after this; default 60.
     */
    leaseSeconds?: number;
  };
  /** Server-sent events (`GET /api/events`). */
  events?: {
    /** Seconds between the comment lines that keep an idle stream open through proxies; default 15. */
    heartbeatSeconds?: number;
  };
  /**
   * Webhooks (CONTRACT §16): every matching change is posted, signed, to the webhook's URL by the
   * worker processes (`jobs.worker`), retried with a doubling wait, then `Failed`.
   */
  webhooks?: {
    /**
     * Host names (or addresses) a webhook may reach although they resolve to loopback, private or
     * link-local addresses, which are refused otherwise; default none.
     */
    allowedHosts?: readonly string[];
    /** Attempts before a delivery is `Failed`; default 8. */
    maxAttempts?: number;
    /** The wait after the first failed attempt, in ms, doubled after each further one; default 30,000 (8 attempts span about an hour). */
    retryBaseMs?: number;
    /** The longest an attempt may take to get the answer's status, in ms; default 10,000. */
    timeoutMs?: number;
    /** How long a worker holds a delivery it attempts, in ms; one whose process died is attempted again after it; default 60,000. */
    leaseMs?: number;
    /** How often a worker looks for due deliveries while webhooks are active, in ms; default 5,000. */
    pollMs?: number;
    /** Deliveries one process attempts at once; default 8. */
    concurrency?: number;
    /** Name resolution of webhook hosts (the guard checks what it answers); default the system's. */
    lookup?: LookupFunction;
  };
  jobs?: {
    /** `pg-boss` (default on PostgreSQL: processes share the work) or `in-process` (default on SQLite). */
    queue?: 'pg-boss' | 'in-process';
    /**
     * pg-boss: seconds after which pg-boss hands a job out again, as a last resort (a job whose
     * process died is found within seconds, its lease being free); default 900.
     */
    expireInSeconds?: number;
    /** Whether this process runs jobs (false for API-only processes); default true. */
    worker?: boolean;
    /**
     * Milliseconds a new job waits before this process's worker takes it up: the request that
     * started it answers first, and a client may cancel it meanwhile. Default 250.
     */
    startDelayMs?: number;
  };
}

/** The names of the entity types of a list of definitions (`'Brand' | 'Product'`); never for an untyped list. */
export type EntityNames<TEntities extends readonly EntityDefinition[]> = string extends TEntities[number]['name'] ? never : TEntities[number]['name'];

/** The definition of one entity type, by name. */
export type EntityNamed<TEntities extends readonly EntityDefinition[], TName> = Extract<TEntities[number], { name: TName }>;

/** A repository whose records and bodies are typed from a definition. */
export type EntityRepository<$Definition extends EntityDefinition> = Omit<Repository<RecordOf<$Definition>>, 'create' | 'update'> & {
  create(ctx: RequestContext, body: CreateBody<$Definition>): Promise<RecordOf<$Definition>>;
  update(ctx: RequestContext, id: string, body: UpdateBody<$Definition>): Promise<RecordOf<$Definition>>;
};

/**
 * What `createEntityApi` answers: an `EntityApi` whose `repository(name)` is typed for the
 * entity types of `entities` (records, create and update bodies). It is an `EntityApi`, so it
 * goes wherever one is expected.
 */
export type TypedEntityApi<TEntities extends readonly EntityDefinition[]> = {
  repository<TName extends EntityNames<TEntities>>(entity: TName): EntityRepository<EntityNamed<TEntities, TName>>;
} & EntityApi;

/** Background jobs of the instance's queue, for the host's own long tasks too. */
export interface EntityJobs {
  /**
   * Adds a job type: `start(type, payload, ctx)` records a `Job` and queues it; a worker process
   * runs `handler` with the payload and the context of whoever started it. The handler's result
   * becomes the job's `result`; an array of `{status}` items also fills its counts.
   */
  define(type: string, handler: JobHandler): void;
  /** Records and queues a job of a defined type; answers its id (`GET /api/Job/{id}` shows it). */
  start(type: string, payload: Record<string, unknown>, ctx: RequestContext): Promise<string>;
}

/** What `api.authenticate()` does when a request has no credentials. */
export interface AuthenticateOptions {
  /** Let the request through without a user (the context has none) instead of answering 401; default false. */
  optional?: boolean;
}

/** A running instance: the router to mount, repositories for server-side code, and its life cycle. */
export interface EntityApi {
  /** Mount with `app.use(api.router)`: serves `/api`, `/api/v1` and `/apidocs`. */
  readonly router: Router;
  readonly schema: SchemaModel;
  readonly database: Database;
  readonly auth: AuthService;
  /** Sign-in throttling (shared by processes through the database); plugins throttle their own secrets with it. */
  readonly throttle: LoginThrottle;
  readonly options: Readonly<EntityApiOptions>;
  /** The instance's languages, main first (option `languages`). */
  readonly languages: Languages;
  /** Syncs the schema and creates the admin; requests wait for it. Idempotent. */
  ready(): Promise<void>;
  /**
   * The repository of an entity type; an unknown name throws `CORE_CONFIG_INVALID`. On the
   * instance `createEntityApi` answers, an entity of `entities` gets a typed one (`TypedEntityApi`).
   */
  repository<TRecord extends ApiRecord = ApiRecord>(entity: string): Repository<TRecord>;
  /**
   * Middleware for the host's own routes: authenticates the request as the API does (token,
   * the host's `auth.resolveUser`, session cookie) and puts the user on `requestContext(req)`;
   * answers 401 with the API's error body otherwise.
   */
  authenticate(options?: AuthenticateOptions): RequestHandler;
  /** Background jobs: the host's own job types on the same queue. */
  readonly jobs: EntityJobs;
  /** The OpenAPI 3.1 document. */
  openapi(): Record<string, unknown>;
  /** What schema sync would do now, without doing it. */
  schemaDiff(): Promise<SchemaStep[]>;
  /**
   * Stops the instance: refuses new requests (503), lets those in flight finish (at most
   * `closeGraceMs`), hands running jobs back to the queue at a safe point, closes plugins
   * (uploads in progress lose their temporary files) and the database pool.
   */
  close(): Promise<void>;
}
