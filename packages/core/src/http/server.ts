import http from 'node:http';
import type { Express } from 'express';
import { ApiError } from '../errors';
import { answerClientErrors } from './client-errors';

type Constructor = new (...args: never[]) => object;

/**
 * Node's constructor made to give its objects `prototype` in front of its own prototype chain: a
 * subclass, so V8 lays its objects out as Node's own (a plain function that calls Node's would
 * hold all their fields outside the object, slower to reach).
 */
function bornWith<TMade extends Constructor>(base: TMade, prototype: object): TMade {
  const Born = class extends (base as unknown as new (...args: unknown[]) => object) {};
  // What `req.constructor` was: Node's, through Express's prototypes.
  delete (Born.prototype as { constructor?: unknown }).constructor;
  Object.setPrototypeOf(Born.prototype, prototype);
  return Born as unknown as TMade;
}

type BornOptions = Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'>;

/** The options given for each app: made once, its prototypes replaced once. */
const bornOptions = new WeakMap<Express, BornOptions>();

/**
 * The options that make a Node HTTP server's requests and responses carry an Express app's own
 * prototypes from birth (`app.request`, `app.response`).
 *
 * Express gives each request and response the app's prototypes when it takes them
 * (`Object.setPrototypeOf`). V8 makes objects whose prototype changed after birth slow to
 * read and write in every part of Node's HTTP code that touches them: about as much CPU per
 * request as the whole of bare `node:http` (see `npm run bench:http`). Born with them, the
 * change is a no-op.
 *
 * To that end `app.request` and `app.response` become the prototypes of Node's classes
 * subclassed, each placed in front of the app's former one: everything the host put on
 * `app.request` or `app.response`, before or after, still reaches every request (`req.app`,
 * `res.locals` and the rest work as before). The same app gives the same options every time.
 *
 * Merge them into the options of `http.createServer` or `https.createServer`; `createHttpServer`
 * does it for plain HTTP.
 *
 * @example
 * const server = https.createServer({ ...bornWithAppPrototypes(app), key, cert }, app);
 */
export function bornWithAppPrototypes(app: Express): BornOptions {
  let options = bornOptions.get(app);
  if (!options) {
    const IncomingMessage = bornWith(http.IncomingMessage, app.request);
    const ServerResponse = bornWith(http.ServerResponse, app.response);
    app.request = IncomingMessage.prototype as Express['request'];
    app.response = ServerResponse.prototype as Express['response'];
    options = { IncomingMessage, ServerResponse };
    bornOptions.set(app, options);
  }
  return options;
}

/**
 * An HTTP server for an Express app that holds the API's router: its requests and responses are
 * born with the app's prototypes (`bornWithAppPrototypes`: about twice Express's own speed), and
 * requests that Node's parser refuses are answered with the API's JSON errors
 * (`answerClientErrors`). `options` are Node's (`maxHeaderSize`, timeouts, …); an `IncomingMessage`
 * or `ServerResponse` of the host's own is kept.
 *
 * @example
 * const app = express();
 * app.use(api.router);
 * createHttpServer(app, { maxHeaderSize: 64 * 1024 }).listen(3000, '127.0.0.1');
 */
export function createHttpServer(app: Express, options: http.ServerOptions = {}): http.Server {
  // Node answers an HTTP/1.1 request without a Host header itself, with an empty 400: answered
  // here with the API's JSON error instead (unless the host turned the requirement off).
  const listener = options.requireHostHeader === false ? app : hostRequired(app);
  const server = http.createServer({ ...bornWithAppPrototypes(app), ...options, requireHostHeader: false }, listener);
  answerClientErrors(server);
  return server;
}

/** `app`, but an HTTP/1.1 request without a Host header (RFC 9112 §3.2) is 400 `CORE_MALFORMED_REQUEST`. */
function hostRequired(app: Express): http.RequestListener {
  return (req, res) => {
    if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 || req.headers.host) {
      app(req, res);
      return;
    }
    const error = new ApiError('CORE_MALFORMED_REQUEST', 'An HTTP/1.1 request must carry a Host header');
    const body = JSON.stringify(error.toJSON());
    res.writeHead(error.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Status-Reason': error.message,
      Connection: 'close',
    });
    res.end(body);
  };
}
