import type { RequestHandler } from 'express';

/**
 * Middleware that runs `handlers` one after the other as one layer of a router: what each passes
 * to `next` is what Express would make of it (an error, or `'route'` and `'router'`, goes to the
 * router's `next` at once; nothing runs the next handler). Every layer a request passes costs it
 * the router's matching and bookkeeping: the steps every request takes are one layer, not one each.
 */
export function series(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let at = 0;
    const step = (signal?: unknown): void => {
      if (signal) return next(signal);
      const handler = handlers[at++];
      if (!handler) return next();
      try {
        handler(req, res, step);
      } catch (error) {
        next(error);
      }
    };
    step();
  };
}
