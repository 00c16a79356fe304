import type { RequestHandler, Router } from 'express';
import { ApiError, BootError } from '../errors';

/** The names body-parser gives its middleware (express.json(), express.urlencoded(), …). */
const BODY_PARSERS = new Set(['jsonParser', 'urlencodedParser', 'textParser', 'rawParser']);

interface Layer {
  name?: string;
  match?(path: string): boolean;
}

interface ParentApp {
  router?: { stack?: Layer[] };
}

/**
 * A body parser the host mounted before the router, covering its paths: it would read the API's
 * bodies with its own limit and answer malformed JSON with its own error page.
 */
function parserBefore(parent: ParentApp, mountPath: string): string | undefined {
  const stack = parent.router?.stack ?? [];
  // The router's own layer is the last one: Express adds it before it says so.
  const probe = `${mountPath.replace(/\/+$/, '')}/api`;
  return stack.slice(0, -1).find((layer) => BODY_PARSERS.has(layer.name ?? '') && layer.match?.(probe) !== false)?.name;
}

/**
 * Lets the router learn where a host app mounts it: Express tells mounted sub-apps (what has
 * `handle` and `set`) through a `mount` event, and a Router has `handle` already. A body parser
 * mounted before it over its paths is a start-up error that says how to mount them instead.
 */
export function guardMount(router: Router): void {
  const mountable = router as Router & { set?: () => unknown; emit?: (event: string, parent: ParentApp) => boolean; mountpath?: string | string[] };
  mountable.set = () => mountable;
  mountable.emit = (event, parent) => {
    if (event !== 'mount') return false;
    const paths = Array.isArray(mountable.mountpath) ? mountable.mountpath : [mountable.mountpath ?? '/'];
    for (const path of paths) {
      const parser = parserBefore(parent, path);
      if (parser === undefined) continue;
      throw new BootError(
        'CORE_CONFIG_INVALID',
        `a body parser (${parser}, from express.json() or the like) is mounted before api.router and would read the API's request bodies ` +
          `with its own size limit and error page: mount api.router before it, or mount the parser on your own paths only (app.use('/your-path', express.json()))`,
        { option: 'router', parser },
      );
    }
    return true;
  };
}

/** Whether the request's body was read before the router (a host's parser inside another router). */
function bodyAlreadyRead(req: Parameters<RequestHandler>[0]): boolean {
  const headers = req.headers;
  const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  return hasBody && req.readableEnded;
}

/**
 * The same guard at request time, where no mount event came: a host's `Router` tells nothing of
 * what is mounted in it, so a parser before the router inside one shows only when a request's
 * body arrives already read. Its bytes are gone, so the API cannot check the body as it does
 * (size, UTF-8, NUL): the request is refused as the server's fault, with a code of its own and a
 * message that says how to mount them (answered and logged).
 */
export function refuseForeignBody(exempt?: (path: string) => boolean): RequestHandler {
  return (req, _res, next) => {
    if (exempt?.(req.path) || !bodyAlreadyRead(req)) return next();
    next(new ApiError(
      'CORE_BODY_READ_BY_HOST',
      'A body parser of the host (express.json() or the like, in a Router before api.router) read this request\'s body before the API could: ' +
        'mount api.router before the parser, or the parser on the host\'s own paths only',
    ));
  };
}
