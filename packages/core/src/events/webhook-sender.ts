import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isGuardRefusal, lookupFor, refusedHost } from '../net/outgoing-guard';

/**
 * One attempt of a webhook delivery (CONTRACT §16): a signed `POST` of the JSON body to the
 * webhook's URL through the address guard (checked when connecting, on every attempt), judged by
 * its status. Exports `signature` (what a receiver computes to check a delivery) and `sendOnce`.
 */

/** How an attempt went: a 2xx in time, or why not (the status when one came). */
export type SendResult = { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string };

export interface SendOptions {
  /** Hosts the guard lets through although they resolve to private addresses. */
  allowedHosts: ReadonlySet<string>;
  /** The longest an attempt may take until the answer's status line, in ms. */
  timeoutMs: number;
  /** Name resolution (tests stub it); default the system's. */
  lookup?: LookupFunction;
  /** Aborts the attempt (the process stops). */
  signal?: AbortSignal;
}

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the secret>`. */
export const signature = (secret: string, timestamp: number, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

/** The URL of a webhook, if it is an absolute http or https one. */
function targetUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Posts `body` to `url` once: a 2xx status line within `timeoutMs` delivers it. Redirects are not
 * followed (a 3xx is a failed attempt). Never throws: every failure is a result.
 */
export function sendOnce(
  { url: address, secret, webhookId, deliveryId, body }: { url: string; secret: string; webhookId: string; deliveryId: string; body: string },
  options: SendOptions,
): Promise<SendResult> {
  const url = targetUrl(address);
  if (!url) return Promise.resolve({ ok: false, statusCode: null, error: 'url is not an absolute http or https URL' });
  const refusal = refusedHost(url, options.allowedHosts);
  if (refusal) return Promise.resolve({ ok: false, statusCode: null, error: `refused: ${refusal}` });
  const timestamp = Math.floor(Date.now() / 1000);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const controller = new AbortController();
    const stop = () => controller.abort();
    options.signal?.addEventListener('abort', stop);
    const timer = setTimeout(stop, options.timeoutMs);
    let settled = false;
    const done = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
      resolve(result);
    };
    const req = client.request(url, {
      method: 'POST',
      agent: false,
      lookup: lookupFor(url, options),
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'entity-records-webhooks',
        'x-webhook-id': webhookId,
        'x-webhook-delivery': deliveryId,
        'x-webhook-timestamp': String(timestamp),
        'x-webhook-signature': signature(secret, timestamp, body),
      },
    });
    req.once('response', (res) => {
      const statusCode = res.statusCode ?? 0;
      // The answer's body is not read: the status decides.
      res.resume();
      res.on('error', () => undefined);
      req.destroy();
      if (statusCode >= 200 && statusCode <= 299) done({ ok: true, statusCode });
      else done({ ok: false, statusCode, error: `answered with status ${statusCode}` });
    });
    req.on('error', (error: Error) => {
      if (isGuardRefusal(error)) done({ ok: false, statusCode: null, error: `refused: host ${url.hostname} resolves to a private or reserved address` });
      else if (controller.signal.aborted && !options.signal?.aborted) done({ ok: false, statusCode: null, error: `no answer within ${options.timeoutMs} ms` });
      else done({ ok: false, statusCode: null, error: `could not connect: ${error.message}` });
    });
    req.end(body);
  });
}
