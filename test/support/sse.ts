import http from 'node:http';

/** One server-sent event as a client reads it. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** A server-sent event stream read over a real connection (loopback). */
export interface SseClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  /** Comment lines received (heartbeats). */
  comments: string[];
  /** Waits until an event the predicate accepts has arrived (at most `ms`). */
  next(predicate: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
  /** Whether the server ended the stream. */
  ended(): boolean;
  close(): void;
}

/** Opens `GET url` with `headers` and reads its events as they come. */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiting: (() => void)[] = [];
      let buffer = '';
      let done = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const event: SseEvent = { data: '' };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) ((event.id = line.slice(4)), (isEvent = true));
            else if (line.startsWith('event: ')) ((event.event = line.slice(7)), (isEvent = true));
            else if (line.startsWith('data: ')) ((event.data += line.slice(6)), (isEvent = true));
          }
          if (isEvent) events.push(event);
        }
        for (const wake of waiting.splice(0)) wake();
      });
      res.on('end', () => {
        done = true;
        for (const wake of waiting.splice(0)) wake();
      });
      res.on('error', () => undefined);
      const next = async (predicate: (e: SseEvent) => boolean, ms = 5000) => {
        const deadline = Date.now() + ms;
        for (;;) {
          const found = events.find(predicate);
          if (found) return found;
          if (done || Date.now() > deadline) throw new Error(`no such event within ${ms} ms; got ${JSON.stringify(events)}`);
          await new Promise<void>((resolve) => {
            // The timer goes with the wait: a pending one would keep the test process alive.
            const timer = setTimeout(wake, Math.max(10, deadline - Date.now()));
            function wake() {
              clearTimeout(timer);
              resolve();
            }
            waiting.push(wake);
          });
        }
      };
      resolve({ status: res.statusCode ?? 0, headers: res.headers, events, comments, next, ended: () => done, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}
