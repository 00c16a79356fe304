import fs from 'node:fs';
import type { Server } from 'node:http';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';

/** One statement a server sent to PostgreSQL, as the driver received it. */
export interface CapturedQuery {
  sql: string;
  bindings: unknown[];
}

/** The statements a server sends between the bench's `capture-start` and `capture-stop`. */
export class QueryCapture {
  private queries: CapturedQuery[] | undefined;

  /** Keeps one statement, while capturing. */
  record(sql: string, bindings: unknown[]): void {
    this.queries?.push({ sql, bindings });
  }

  start(): void {
    this.queries = [];
  }

  stop(): CapturedQuery[] {
    const queries = this.queries ?? [];
    this.queries = undefined;
    return queries;
  }
}

interface ChildServer {
  port: number;
  capture: QueryCapture;
  close(): Promise<void>;
}

/** Messages the bench sends to a server child; each gets one answer of the same `type`. */
export type ChildRequest =
  | { type: 'capture-start' }
  | { type: 'capture-stop' }
  | { type: 'cpu' }
  | { type: 'memory' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'stop' };

/**
 * Answers the bench over the IPC channel of `fork`: SQL capture, CPU time, a V8 CPU profile of
 * exactly the measured window (the inspector's profiler, the one behind `node --cpu-prof`), stop.
 */
function serveBench(server: ChildServer): void {
  const send = (message: object) => process.send?.(message);
  let session: Session | undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.close().catch(() => undefined);
    process.exit(0);
  };
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => {
      (session as Session).post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result)));
    });
  process.on('message', (message: ChildRequest) => {
    void (async () => {
      switch (message.type) {
        case 'capture-start':
          server.capture.start();
          return send({ type: message.type });
        case 'capture-stop':
          return send({ type: message.type, queries: server.capture.stop() });
        case 'cpu':
          return send({ type: message.type, usage: process.cpuUsage() });
        case 'memory':
          // After a full collection when the child runs with --expose-gc: what is really held.
          (globalThis as { gc?: () => void }).gc?.();
          return send({ type: message.type, usage: process.memoryUsage() });
        case 'profile-start':
          session = new Session();
          session.connect();
          await post('Profiler.enable');
          await post('Profiler.start');
          return send({ type: message.type });
        case 'profile-stop': {
          const { profile } = (await post('Profiler.stop')) as { profile: unknown };
          fs.writeFileSync(message.file, JSON.stringify(profile));
          session?.disconnect();
          session = undefined;
          return send({ type: message.type, file: message.file });
        }
        case 'stop':
          send({ type: message.type });
          return stop();
      }
    })().catch((error: unknown) => {
      console.error(error);
      void stop();
    });
  });
  // The bench went away without saying stop: do not outlive it.
  process.on('disconnect', () => void stop());
  process.once('SIGTERM', () => void stop());
  send({ type: 'ready', port: server.port });
}

/**
 * Starts `server` on a free port of 127.0.0.1 and answers the bench (serveBench). On stop, lets
 * requests in flight finish (closeHttp), then `closeRest` closes what else the server holds.
 */
export async function serveHttpToBench(server: Server, capture: QueryCapture, closeRest: () => Promise<void>): Promise<void> {
  watchHttp(server);
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  serveBench({
    port: (server.address() as AddressInfo).port,
    capture,
    async close() {
      await closeHttp(server);
      await closeRest();
    },
  });
}

interface HttpState {
  inFlight: number;
  /** When a client last went away before its answer: the handler may still be using the database. */
  lastAbortAt: number;
}
const states = new WeakMap<Server, HttpState>();

/** Counts requests in flight so that closeHttp can let them finish. Call once after creating the server. */
function watchHttp(server: Server): void {
  const state: HttpState = { inFlight: 0, lastAbortAt: 0 };
  states.set(server, state);
  server.on('request', (_req, res) => {
    state.inFlight += 1;
    res.once('close', () => {
      state.inFlight -= 1;
      if (!res.writableFinished) state.lastAbortAt = Date.now();
    });
  });
}

/**
 * Stops accepting and lets requests in flight finish, also those whose client went away (the load
 * generator stops mid-request): their handlers get 1 s to finish with the database. At most 5 s.
 */
async function closeHttp(server: Server): Promise<void> {
  server.close();
  server.closeIdleConnections();
  const state = states.get(server);
  const busy = () => state !== undefined && (state.inFlight > 0 || Date.now() - state.lastAbortAt < 1000);
  for (let waited = 0; busy() && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  server.closeAllConnections();
}
