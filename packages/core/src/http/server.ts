import http from 'node:http';
import type { Express } from 'express';
import { answerClientErrors } from './client-errors';

type Constructor = new (...args: never[]) => object;

/**
 * A constructor for Node's server to make requests (or responses) with: Node's own, but each
 * object is born with `prototype`. Undefined where Node's constructor is a class (it cannot be
 * called on an object made elsewhere): the server then makes its usual objects.
 */
function bornWith<TMade extends Constructor>(base: TMade, prototype: object): TMade | undefined {
  if (Function.prototype.toString.call(base).startsWith('class')) return undefined;
  const call = base as unknown as (this: unknown, ...args: unknown[]) => void;
  // Called with `new` by Node: `this` already has `prototype`; Node's constructor fills it in.
  function Born(this: unknown, ...args: unknown[]): void {
    call.apply(this, args);
  }
  Born.prototype = prototype;
  return Born as unknown as TMade;
}

/**
 * The options that make a Node HTTP server's requests and responses carry an Express app's own
 * prototypes from birth (`app.request`, `app.response`).
 *
 * Express gives each request and response the app's prototypes when it takes them
 * (`Object.setPrototypeOf`). V8 makes objects whose prototype changed after birth slow to
 * read and write in every part of Node's HTTP code that touches them: about as much CPU per
 * request as the whole of bare `node:http` (see `npm run bench:http`). Born with them, the
 * change is a no-op and nothing else differs: `req.app`, `res.locals` and the host's own
 * `app.request` additions work as before.
 *
 * Merge them into the options of `http.createServer` or `https.createServer`; `createHttpServer`
 * does it for plain HTTP.
 *
 * @example
 * const server = https.createServer({ ...bornWithAppPrototypes(app), key, cert }, app);
 */
export function bornWithAppPrototypes(app: Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  const IncomingMessage = bornWith(http.IncomingMessage, app.request);
  const ServerResponse = bornWith(http.ServerResponse, app.response);
  return IncomingMessage && ServerResponse ? { IncomingMessage, ServerResponse } : {};
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
  const server = http.createServer({ ...bornWithAppPrototypes(app), ...options }, app);
  answerClientErrors(server);
  return server;
}
