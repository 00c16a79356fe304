/**
 * One error class for everything the API can answer with, string codes prefixed by package, and
 * one table from code to HTTP status. Core's codes are below; a plugin declares its own
 * (`definePlugin({ errors })`, `declareErrors`) and adds their types by declaration merging on
 * `ErrorCodes`, so a code without a status does not compile anywhere.
 */

const CORE_ERROR_STATUS = {
  CORE_INVALID_JSON: 400,
  CORE_VALIDATION_FAILED: 400,
  CORE_UNKNOWN_FIELD: 400,
  CORE_INVALID_QUERY: 400,
  CORE_INVALID_PATH: 400,
  CORE_INVALID_ID: 400,
  CORE_INVALID_LINK: 400,
  CORE_READ_ONLY_FIELD: 400,
  CORE_INVALID_LANGUAGE: 400,
  CORE_IDEMPOTENCY_KEY_INVALID: 400,
  CORE_MALFORMED_REQUEST: 400,
  CORE_UNAUTHORIZED: 401,
  CORE_FORBIDDEN: 403,
  CORE_OUTSIDE_ROW_RULES: 403,
  CORE_NOT_FOUND: 404,
  CORE_ROUTE_NOT_FOUND: 404,
  CORE_UNIQUE_VIOLATION: 409,
  CORE_CONFLICT: 409,
  CORE_IDEMPOTENCY_IN_PROGRESS: 409,
  CORE_PRECONDITION_FAILED: 412,
  CORE_PAYLOAD_TOO_LARGE: 413,
  CORE_IDEMPOTENCY_MISMATCH: 422,
  CORE_HEADERS_TOO_LARGE: 431,
  CORE_UNSUPPORTED_MEDIA_TYPE: 415,
  CORE_TOO_MANY_REQUESTS: 429,
  CORE_INTERNAL: 500,
  CORE_BODY_READ_BY_HOST: 500,
  CORE_DATABASE_UNAVAILABLE: 503,
  CORE_TIMEOUT: 503,
  CORE_BUSY: 503,
  CORE_SHUTTING_DOWN: 503,
} as const satisfies Record<string, number>;

type CoreErrorCodes = typeof CORE_ERROR_STATUS;

/**
 * Error codes with their HTTP status. Plugins add theirs by declaration merging:
 * `declare module '@entity-records/core' { interface ErrorCodes extends ErrorTable<typeof FILES_ERRORS> {} }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ErrorCodes extends CoreErrorCodes {}

/** A table of declared codes as the type `ErrorCodes` extends. */
export type ErrorTable<TCodes extends Record<string, number>> = { readonly [K in keyof TCodes]: TCodes[K] };

export type ErrorCode = keyof ErrorCodes & string;

const CODE_PATTERN = /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/;

/** Every declared code's status: core's, then those plugins declare. */
const statuses = new Map<string, number>(Object.entries(CORE_ERROR_STATUS));

/**
 * Declares error codes with their HTTP status (a plugin's own, prefixed by its package:
 * `FILES_TOO_LARGE`). A code declared again with another status, or not in SCREAMING_SNAKE case
 * with a prefix, is refused. Answers the table (for `ErrorTable<typeof …>`).
 */
export function declareErrors<const TCodes extends Record<string, number>>(codes: TCodes): TCodes {
  for (const [code, status] of Object.entries(codes)) {
    const known = statuses.get(code);
    if (!CODE_PATTERN.test(code) || !Number.isInteger(status) || status < 400 || status > 599 || (known !== undefined && known !== status)) {
      throw new BootError('CORE_PLUGIN_INVALID', `error code ${code} (${status}) is not a PREFIX_NAME code with a 4xx or 5xx status, or is declared with another status`);
    }
    statuses.set(code, status);
  }
  return codes;
}

/** The status of every declared code (core's and those of the plugins loaded), by code. */
export function errorStatuses(): ReadonlyMap<string, number> {
  return statuses;
}

/** Core's own codes and statuses (the OpenAPI document adds those of the plugins an instance has). */
export const CORE_ERRORS: Readonly<CoreErrorCodes> = CORE_ERROR_STATUS;

/** Codes that are raised while the instance starts; they never reach HTTP. */
export const BOOT_ERROR_CODES = [
  'CORE_DEFINITION_INVALID',
  'CORE_PLUGIN_INVALID',
  'CORE_HOOK_NOT_SUPPORTED',
  'CORE_CONFIG_INVALID',
] as const;
export type BootErrorCode = (typeof BOOT_ERROR_CODES)[number];

export interface ValidationIssue {
  path: (string | number)[];
  code: string;
  message: string;
}

export interface ApiErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    // A code no one declared is a fault of the server's code, not of the request.
    this.status = statuses.get(code) ?? 500;
    this.details = options.details;
    this.headers = options.headers;
  }

  /**
   * The body sent to clients: `details` is always an object, empty when there is nothing to add.
   * The cause (a driver error with SQL text) is never part of it.
   */
  toJSON(): { error: { code: ErrorCode; message: string; details: Record<string, unknown> } } {
    return { error: { code: this.code, message: this.message, details: answeredDetails(this.details) } };
  }
}

/** The most issues an answer lists, and keys a message names: a body of many bad keys gets a short answer. */
const MAX_ISSUES = 100;
const MAX_NAMED_KEYS = 20;

/** `details` as answered: at most MAX_ISSUES issues, with `issuesOmitted` counting the rest. */
function answeredDetails(details: Record<string, unknown> = {}): Record<string, unknown> {
  const { issues } = details;
  if (!Array.isArray(issues) || issues.length <= MAX_ISSUES) return details;
  return { ...details, issues: issues.slice(0, MAX_ISSUES), issuesOmitted: issues.length - MAX_ISSUES };
}

/**
 * The messages of some issues as one message: the first MAX_NAMED_KEYS of them, then how many
 * more (`details.issues` lists them, up to MAX_ISSUES). A body of thousands of bad items (unknown
 * attribute ids) gets a short answer, and an upsert item a short `message`.
 */
export function joinedMessages(issues: readonly ValidationIssue[]): string {
  const named = issues.slice(0, MAX_NAMED_KEYS).map((i) => i.message);
  return issues.length > MAX_NAMED_KEYS ? `${named.join('; ')}; and ${issues.length - MAX_NAMED_KEYS} more` : named.join('; ');
}

/**
 * 400 `CORE_UNKNOWN_FIELD` naming every unknown key of a body, one issue each: `noun` is what the
 * keys should be ("field"), `where` whose ("for Product", "in an upsert item").
 */
export function unknownKeys(keys: readonly string[], { noun, where }: { noun: string; where: string }): ApiError {
  const named = keys.length > MAX_NAMED_KEYS ? `${keys.slice(0, MAX_NAMED_KEYS).join(', ')} and ${keys.length - MAX_NAMED_KEYS} more` : keys.join(', ');
  return new ApiError('CORE_UNKNOWN_FIELD', `Unknown ${noun}${keys.length > 1 ? 's' : ''} ${where}: ${named}`, {
    details: { issues: keys.map((key) => ({ path: [key], code: 'unknown_field', message: `${key} is not a ${noun} ${where}` })) },
  });
}

/** 400 `CORE_UNKNOWN_FIELD` for the keys of a request body (`what`: "an entityRestore body") that are not `known`. */
export function assertKnownKeys(body: object, known: readonly string[], what: string): void {
  const unknown = Object.keys(body).filter((key) => !known.includes(key));
  if (unknown.length) throw unknownKeys(unknown, { noun: 'key', where: `in ${what}` });
}

/**
 * Thrown at start-up for a bad definition, plugin or configuration. `details` names what is
 * wrong for programs (`{ option: 'jobs.queue', suggestion: 'pg-boss' }`); the message says it for people.
 */
export class BootError extends Error {
  readonly code: BootErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: BootErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(`${code}: ${message}`);
    this.name = 'BootError';
    this.code = code;
    this.details = details;
  }
}

export function createError(
  code: ErrorCode,
  message: string,
  options?: ApiErrorOptions,
): ApiError {
  return new ApiError(code, message, options);
}

export const notFound = (entity: string, id: string): ApiError =>
  new ApiError('CORE_NOT_FOUND', `${entity} '${id}' not found`, { details: { entity, id } });

/**
 * 409 `CORE_CONFLICT` for a permanent delete of a record that a link of another record, which
 * may not lose it, still names (`by`: that record's entity type and link field).
 */
export const stillLinked = (entity: string, id: string, by: { entity: string; field: string }): ApiError =>
  new ApiError('CORE_CONFLICT', `${entity} '${id}' cannot be deleted permanently: ${by.entity}.${by.field} of a record (in the bin too) names it; delete that record permanently first`, {
    details: { entity, id, by },
  });

export const validationFailed = (message: string, issues: ValidationIssue[]): ApiError =>
  new ApiError('CORE_VALIDATION_FAILED', message, { details: { issues } });

/**
 * A JSON body as an object (a missing body is an empty one). Any other JSON value (an array) is
 * 400 `CORE_VALIDATION_FAILED` with one issue at the path `[]`: `what` ("The body") must be an object.
 */
export function objectBody(body: unknown, what = 'The body'): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  const got = Array.isArray(body) ? 'an array' : body === null ? 'null' : `a ${typeof body}`;
  throw validationFailed(`${what} must be a JSON object, not ${got}`, [{ path: [], code: 'invalid_type', message: `expected an object, got ${got}` }]);
}

/**
 * 400 `CORE_VALIDATION_FAILED` (with `message`) unless `value` is an array of strings: the issue
 * names the list (`[name]`: missing or not an array) or its first item that is not a string (`[name, i]`).
 */
export function assertStringList(value: unknown, name: string, message: string): asserts value is string[] {
  if (value === undefined) throw validationFailed(message, [{ path: [name], code: 'required', message: `${name} is required` }]);
  if (!Array.isArray(value)) throw validationFailed(message, [{ path: [name], code: 'invalid_type', message: `${name} must be an array of strings` }]);
  const bad = value.findIndex((item) => typeof item !== 'string');
  if (bad >= 0) throw validationFailed(message, [{ path: [name, bad], code: 'invalid_type', message: `${name}.${bad} must be a string` }]);
}

/**
 * The error of a part of a body named from the top of the body: the paths of its
 * `details.issues` under `prefix` (`values` of an entityMassUpdate, `brand` of a link object).
 * Anything else is returned as it is.
 */
export function issuesUnder(error: unknown, prefix: readonly (string | number)[]): unknown {
  if (prefix.length === 0) return error;
  return withIssues(error, (issue) => ({ ...issue, path: [...prefix, ...(Array.isArray(issue.path) ? issue.path : [])] }));
}

/**
 * An error whose `details.issues` are each changed by `issue` (and its message by `message`), the
 * rest kept: code, other details, headers, cause. Anything without issues is returned as it is.
 */
export function withIssues(error: unknown, issue: (issue: ValidationIssue) => ValidationIssue, message = (text: string) => text): unknown {
  const issues = error instanceof ApiError ? error.details?.issues : undefined;
  if (!(error instanceof ApiError) || !Array.isArray(issues)) return error;
  return new ApiError(error.code, message(error.message), { details: { ...error.details, issues: (issues as ValidationIssue[]).map(issue) }, headers: error.headers, cause: error.cause });
}

/** Anything thrown becomes an ApiError; unknown values become CORE_INTERNAL with their cause. */
export function toApiError(value: unknown): ApiError {
  if (value instanceof ApiError) return value;
  return new ApiError('CORE_INTERNAL', 'Internal server error', { cause: value });
}
