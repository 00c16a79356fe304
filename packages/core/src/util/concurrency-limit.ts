/** How many tasks run at once, how many may wait, and the error for one that finds the queue full. */
export interface ConcurrencyLimitOptions {
  concurrency: number;
  queue: number;
  /** Thrown (rejected) for a task that would wait past `queue`. */
  busy: () => Error;
}

/**
 * Runs at most `concurrency` tasks at a time; the next `queue` tasks wait their turn in order, and
 * any more are refused at once with `busy()`. Bounds what tasks hold together (memory, CPU,
 * connections) however many requests ask.
 *
 * @example
 * const imports = new ConcurrencyLimit({ concurrency: 4, queue: 64, busy: () => new ApiError('CORE_BUSY', 'Too many imports') });
 * await imports.run(() => importFile(url));
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private options: ConcurrencyLimitOptions) {}

  /** Changes the limits; tasks already running or waiting keep their place. */
  configure(options: Partial<Omit<ConcurrencyLimitOptions, 'busy'>>): void {
    this.options = { ...this.options, ...options };
  }

  /** Tasks running now and tasks waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  async run<TResult>(task: () => Promise<TResult>): Promise<TResult> {
    if (this.running >= this.options.concurrency) {
      if (this.waiting.length >= this.options.queue) throw this.options.busy();
      // The task that ends hands its place over: `running` stays as it is.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
