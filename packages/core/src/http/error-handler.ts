import type { ErrorRequestHandler } from 'express';
import { ApiError, toApiError } from '../errors';
import { consoleLogger, instanceLogger, type Logger } from '../logger';
import { requestId } from './request-id';
import { sendUnhashed } from './send-json';

export { consoleLogger, type Logger };

/**
 * Whether a body the strict parser refused is JSON after all: a single value such as `null` or
 * `"x"`. A body that starts like an object or array was parsed, and failed, already.
 */
function isSingleJsonValue(body: unknown): boolean {
  if (typeof body !== 'string' || /^\s*[{[]/.test(body)) return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

/** body-parser's errors by type → our codes. */
function fromBodyParser(error: { type?: string; status?: number; body?: unknown }): ApiError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      if (isSingleJsonValue(error.body)) return new ApiError('CORE_INVALID_JSON', 'The body must be a JSON object or array, not a single value');
      return new ApiError('CORE_INVALID_JSON', 'The body is not valid JSON');
    case 'entity.too.large':
      return new ApiError('CORE_PAYLOAD_TOO_LARGE', 'The body is larger than allowed');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('CORE_UNSUPPORTED_MEDIA_TYPE', 'Unsupported body encoding');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new ApiError('CORE_INVALID_JSON', 'The body could not be read');
    default:
      return undefined;
  }
}

/** The router's own error: a path segment that is not valid percent-encoding (`/api/Product/%FF`). */
function fromRouter(error: unknown): ApiError | undefined {
  if (error instanceof URIError) return new ApiError('CORE_INVALID_PATH', 'The path is not valid percent-encoded UTF-8');
  return undefined;
}

/** Seconds a client should wait before it tries a 503 again (every 503 says it in `Retry-After`). */
const RETRY_AFTER_SECONDS: Partial<Record<string, number>> = { CORE_BUSY: 1, CORE_TIMEOUT: 5, CORE_DATABASE_UNAVAILABLE: 5, CORE_SHUTTING_DOWN: 5 };
const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** A URL as logged: a query string of 256 KiB (a long `where`) would flood the log. */
const loggedUrl = (url: string) => (url.length > 300 ? `${url.slice(0, 300)}… (${url.length} characters)` : url);

/** Header values are ASCII on one line. */
const headerSafe = (text: string) => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 500);

/**
 * The one error middleware: `{error: {code, message, details}}`, the message again in
 * `X-Status-Reason`, never a stack trace or SQL. Status ≥ 500 is logged with a request id.
 */
export function errorHandler(
  logger: Logger = consoleLogger,
  translate: (error: unknown) => ApiError | undefined = () => undefined,
): ErrorRequestHandler {
  const log = instanceLogger(logger);
  return (err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    let error = err instanceof ApiError ? err : (fromBodyParser(err ?? {}) ?? fromRouter(err) ?? translate(err) ?? toApiError(err));
    const id = requestId(req);
    const url = loggedUrl(req.originalUrl);
    const facts = { requestId: id, method: req.method, url, status: error.status, code: error.code };
    if (error.status === 503) {
      // Expected under load or during an outage, and answered with Retry-After: one line, no stack.
      const cause = error.cause instanceof Error ? `: ${error.cause.message.split('\n')[0].slice(0, 300)}` : '';
      log.warn(facts, `${req.method} ${url} → 503 ${error.code}${cause}`);
    } else if (error.status >= 500) {
      // `err` as pino's serializer expects it (type, message, stack); a wrapped driver error under `cause`.
      // Driver messages carry whole statements with values: keep them readable.
      const clip = (text: string | undefined) => (text && text.length > 2000 ? `${text.slice(0, 2000)}…` : text);
      const thrown = err instanceof Error ? err : new Error(String(err));
      const cause = error.cause instanceof Error && error.cause !== thrown ? error.cause : undefined;
      log.error({ ...facts, err: thrown, ...(cause && { cause: { message: clip(cause.message), stack: clip(cause.stack) } }) }, `${req.method} ${url} failed (request ${id})`);
      if (error.code === 'CORE_INTERNAL') {
        error = new ApiError('CORE_INTERNAL', `Internal server error (request ${id})`, { details: { requestId: id } });
      }
    } else {
      log.info(facts, `${req.method} ${url} → ${error.status} ${error.code}`);
    }
    if (!res.getHeader('X-Request-Id')) res.setHeader('X-Request-Id', id);
    for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
    if (error.status === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS[error.code] ?? DEFAULT_RETRY_AFTER_SECONDS));
    res.setHeader('X-Status-Reason', headerSafe(error.message));
    // No ETag: an error stands for no version of anything (a client retrying a 412 with it would fail again).
    sendUnhashed(res.status(error.status), error.toJSON());
  };
}
