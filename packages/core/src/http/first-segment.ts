import express, { type RequestHandler, type Router } from 'express';

/** What an Express router keeps of each middleware and route (router 2.x). */
interface Layer {
  rawPath?: unknown;
  route?: { path?: unknown };
}

/** Characters that make a segment of a path pattern match more than itself. */
const DYNAMIC = /[:*{}()?+\\[\]]/;

/**
 * The first segment a layer's path must have, lower-cased (routers match case-insensitively), or
 * undefined where it may match any: a middleware without a path, a parameter, a RegExp, a list.
 */
function firstSegmentOf(layer: Layer): string | undefined {
  const path = layer.route ? layer.route.path : layer.rawPath;
  if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
  // A route at `/` answers only an empty first segment; a middleware at `/` sees every path.
  if (path === '/') return layer.route ? '' : undefined;
  const end = path.indexOf('/', 1);
  const segment = path.slice(1, end === -1 ? undefined : end);
  return DYNAMIC.test(segment) ? undefined : segment.toLowerCase();
}

/**
 * The router's layers tried only where they can match: a request whose path starts with `/Job`
 * passes only the layers for `/Job…` and those that may match any path, in the router's own
 * order, instead of every layer of the router. The answer is the same; an API with dozens of
 * routes before its record routes matches a record read against a handful. Build it once every
 * route is in the router; a layer added afterwards would not be seen.
 */
export function dispatchByFirstSegment(router: Router): RequestHandler {
  const layers = (router as unknown as { stack: Layer[] }).stack;
  const keys = layers.map(firstSegmentOf);
  const only = (keep: (key: string | undefined) => boolean): Router => {
    const part = express.Router();
    (part as unknown as { stack: Layer[] }).stack = layers.filter((_, i) => keep(keys[i]));
    return part;
  };
  const bySegment = new Map<string, Router>();
  for (const key of new Set(keys)) if (key !== undefined) bySegment.set(key, only((k) => k === undefined || k === key));
  const anyOther = only((k) => k === undefined);
  return (req, res, next) => {
    const url = req.url;
    if (url.charCodeAt(0) !== 47 /* / */) return router(req, res, next);
    let end = 1;
    while (end < url.length) {
      const c = url.charCodeAt(end);
      if (c === 47 || c === 63 /* ? */ || c === 35 /* # */) break;
      // An escape or a letter beyond ASCII: the router's own matching decides.
      if (c === 37 /* % */ || c > 127) return router(req, res, next);
      end++;
    }
    const part = bySegment.get(url.slice(1, end).toLowerCase()) ?? anyOther;
    return part(req, res, next);
  };
}
