import type { RequestHandler, Response } from 'express';
import { ApiError } from '../errors';

/**
 * The requests in flight through an instance's router, so that closing can let them finish.
 * Once closing, a request that still arrives (on a connection kept alive) gets 503
 * `CORE_SHUTTING_DOWN`, and every answer asks the client to close its connection.
 */
export class Traffic {
  private readonly inFlight = new Set<Response>();
  private closing = false;
  private drained?: () => void;

  /** The first middleware of the router: counts the request until its response ends. */
  readonly track: RequestHandler = (_req, res, next) => {
    if (this.closing) {
      res.setHeader('Connection', 'close');
      return next(new ApiError('CORE_SHUTTING_DOWN', 'The server is shutting down; try again shortly'));
    }
    this.inFlight.add(res);
    res.once('close', () => this.leave(res));
    next();
  };

  /** How many requests are being answered now. */
  get size(): number {
    return this.inFlight.size;
  }

  /**
   * Stops taking requests and waits until those in flight are answered, at most `graceMs`;
   * true when all were.
   */
  async drain(graceMs: number): Promise<boolean> {
    this.closing = true;
    for (const res of this.inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    if (this.inFlight.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<boolean>((resolve) => (this.drained = () => resolve(true)));
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
    try {
      return await Promise.race([answered, late]);
    } finally {
      clearTimeout(timer);
      this.drained = undefined;
    }
  }

  private leave(res: Response): void {
    this.inFlight.delete(res);
    if (this.inFlight.size === 0) this.drained?.();
  }
}
