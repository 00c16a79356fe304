import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ApiError, isGuardRefusal, lookupFor, refusedHost } from '@entity-records/core';
import { cleanMimeType } from './file-name';

export interface UrlFetchOptions {
  allowedHosts: ReadonlySet<string>;
  timeoutMs: number;
  maxRedirects: number;
  maxBytes: number;
  lookup?: LookupFunction;
}

export interface FetchedBody {
  /** The response body; the size limit and time limit stay in force while it is read. */
  body: IncomingMessage;
  mimeType: string;
  /** Aborts the download (used when the consumer fails). */
  abort(): void;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const refused = (message: string) => new ApiError('FILES_URL_REFUSED', message);
const failed = (message: string, details?: Record<string, unknown>) => new ApiError('FILES_URL_FETCH_FAILED', message, { details });

/** Only absolute http and https URLs. */
export function parseFileUrl(value: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new ApiError('FILES_URL_REFUSED', 'url must be an absolute http or https URL', {
      details: { issues: [{ path: ['url'], code: 'invalid_format', message: 'url must be an absolute http or https URL' }] },
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused(`url scheme '${url.protocol.replace(/:$/, '')}' is not allowed; use http or https`);
  return url;
}

/** Where a redirect leads: http or https only, and never from https down to http. */
export function redirectTarget(current: URL, location: string): URL {
  let next: URL;
  try {
    next = parseFileUrl(new URL(location, current).href);
  } catch {
    throw refused('url redirects to a location that is not an http or https URL');
  }
  if (current.protocol === 'https:' && next.protocol === 'http:') throw refused('url redirects from https to http');
  return next;
}

/** One request, no redirect handling; resolves once the response head is in. */
function requestOnce(url: URL, options: UrlFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const refusal = refusedHost(url, options.allowedHosts);
  if (refusal) return Promise.reject(refused(`url ${refusal}`));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: 'GET',
      agent: false,
      lookup: lookupFor(url, options),
      headers: { accept: '*/*', 'user-agent': 'entity-records-files' },
      signal,
    });
    req.once('response', resolve);
    req.once('error', (error: Error) => {
      if (isGuardRefusal(error)) reject(refused(`url host ${url.hostname} resolves to a private or reserved address`));
      else if (signal.aborted) reject(failed(`url download took longer than ${options.timeoutMs} ms`));
      else reject(failed(`url could not be fetched: ${error.message}`));
    });
    req.end();
  });
}

/**
 * Starts a download from a client-given URL with the private-address guard, redirects (each
 * checked again; https → http refused), a size limit and a time limit.
 */
export async function fetchUrl(start: URL, options: UrlFetchOptions): Promise<FetchedBody> {
  const controller = new AbortController();
  let body: IncomingMessage | undefined;
  // The body fails when time is up. Aborting the connection alone is not enough: a body without
  // Content-Length or chunked encoding ends where the connection ends, so a cut connection
  // would read as a complete (and truncated) file.
  const timer = setTimeout(() => {
    body?.destroy(failed(`url download took longer than ${options.timeoutMs} ms and was cut short`));
    controller.abort();
  }, options.timeoutMs);
  const abort = () => {
    clearTimeout(timer);
    controller.abort();
  };
  try {
    let url = start;
    for (let redirects = 0; ; redirects++) {
      const res = await requestOnce(url, options, controller.signal);
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status) && res.headers.location) {
        res.resume();
        if (redirects >= options.maxRedirects) throw failed(`url redirects more than ${options.maxRedirects} times`);
        url = redirectTarget(url, res.headers.location);
        continue;
      }
      if (status < 200 || status > 299) {
        res.resume();
        throw failed(`url answered with status ${status}`, { status });
      }
      const length = Number(res.headers['content-length']);
      if (Number.isFinite(length) && length > options.maxBytes) {
        res.resume();
        throw new ApiError('FILES_TOO_LARGE', `the file at url is larger than ${options.maxBytes} bytes`);
      }
      body = res;
      // Its reader listens for errors; this keeps one that comes after the reader stopped from crashing the process.
      res.on('error', () => undefined);
      return { body: res, mimeType: cleanMimeType(res.headers['content-type']), abort };
    }
  } catch (error) {
    abort();
    throw error;
  }
}
