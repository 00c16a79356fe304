/**
 * The logger an instance writes to: pino's calling convention (an object of facts first, the
 * message second), so a pino instance fits as it is, and so does any logger with the same shape.
 */
export interface LogFn {
  (facts: Record<string, unknown>, message?: string): void;
  (message: string): void;
}

export interface Logger {
  /** SQL statements (text only, never their values). */
  debug?: LogFn;
  /** Start-up, schema steps, jobs started and ended, client errors (4xx). */
  info: LogFn;
  warn: LogFn;
  /** Errors with status 500 and failed jobs, with the stack under `err`. */
  error: LogFn;
  /** A logger that adds `bindings` to every line (pino's child loggers); plugins each get one. */
  child?(bindings: Record<string, unknown>): Logger;
  /** pino's check: SQL is only logged (and only formatted) when `debug` is on. */
  isLevelEnabled?(level: string): boolean;
}

/** The logger used without the option: `info` and `debug` are silent, `warn` and `error` go to the console. */
export const consoleLogger: Logger = {
  info: () => undefined,
  warn: (facts: Record<string, unknown> | string, message?: string) => console.warn(...consoleArgs(facts, message)),
  error: (facts: Record<string, unknown> | string, message?: string) => console.error(...consoleArgs(facts, message)),
};

function consoleArgs(facts: Record<string, unknown> | string, message?: string): unknown[] {
  if (typeof facts === 'string') return [facts];
  const { err, ...rest } = facts;
  const stack = err instanceof Error ? err.stack : err;
  return [message ?? '', ...(Object.keys(rest).length ? [rest] : []), ...(stack === undefined ? [] : [stack])];
}

/** The parts of an instance's logger core uses, every level present. */
export interface InstanceLogger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  /** Whether SQL is logged at all. */
  debugEnabled: boolean;
  child(bindings: Record<string, unknown>): Logger;
}

const silent: LogFn = () => undefined;
/** A log function called the one way core calls it. */
type Call = (this: Logger, facts: Record<string, unknown> | string, message?: string) => void;

/** The host's logger with every level present and `child` available (bindings merged by hand without pino). */
export function instanceLogger(logger: Logger = consoleLogger): InstanceLogger {
  const call = (fn: LogFn | undefined): LogFn =>
    fn ? ((facts: Record<string, unknown> | string, message?: string) => (typeof facts === 'string' ? (fn as Call).call(logger, facts) : (fn as Call).call(logger, facts, message))) as LogFn : silent;
  const child = (bindings: Record<string, unknown>): Logger => {
    if (typeof logger.child === 'function') return logger.child(bindings);
    const bound = (fn: LogFn | undefined): LogFn | undefined =>
      fn && (((facts: Record<string, unknown> | string, message?: string) =>
        typeof facts === 'string' ? (fn as Call).call(logger, { ...bindings }, facts) : (fn as Call).call(logger, { ...bindings, ...facts }, message)) as LogFn);
    return { debug: bound(logger.debug), info: bound(logger.info) as LogFn, warn: bound(logger.warn) as LogFn, error: bound(logger.error) as LogFn };
  };
  const debugEnabled = typeof logger.debug === 'function' && (logger.isLevelEnabled ? logger.isLevelEnabled('debug') : true);
  return { debug: call(logger.debug), info: call(logger.info), warn: call(logger.warn), error: call(logger.error), debugEnabled, child };
}
