import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Wraps an async handler once so that a rejection reaches the error middleware. */
export function toHandler(fn: (req: Request, res: Response, next: NextFunction) => Promise<unknown> | unknown): RequestHandler {
  return (req, res, next) => {
    Promise.resolve()
      .then(() => fn(req, res, next))
      .catch(next);
  };
}
