import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  /** The raw body, as signed. */
  raw: string;
  body: { deliveryId: string; webhookId: string; event: { seq: number; entityType: string; recordId: string; action: string; diff: Record<string, unknown>; userId: string | null; createdAt: string } };
  at: number;
}

/** What the receiver answers a request with: a status, or `hold` (never answers). */
export type Answer = number | 'hold';

export interface WebhookReceiver {
  port: number;
  url: string;
  received: Received[];
  /** TCP connections accepted (a refused delivery must open none). */
  connections(): number;
  /** Decides each answer; default 200. */
  answer: (request: Received, index: number) => Answer;
  /** Waits until `n` requests came (or fails after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that records every request. */
export async function webhookReceiver(): Promise<WebhookReceiver> {
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const item: Received = { headers: req.headers, raw, body: JSON.parse(raw), at: Date.now() };
      receiver.received.push(item);
      const answer = receiver.answer(item, receiver.received.length - 1);
      if (answer !== 'hold') res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: WebhookReceiver = {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received: [],
    connections: () => connections,
    answer: () => 200,
    async waitFor(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < n) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${receiver.received.length} of ${n} requests within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return receiver.received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** Whether a request carries the signature a receiver with `secret` expects. */
export function verifies(request: Received, secret: string): boolean {
  const timestamp = String(request.headers['x-webhook-timestamp']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${request.raw}`).digest('hex')}`;
  const given = String(request.headers['x-webhook-signature'] ?? '');
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** Polls `read` until `done` holds of its value (or fails after `timeoutMs`); answers that value. */
export async function eventually<TValue>(read: () => Promise<TValue>, done: (value: TValue) => boolean, timeoutMs = 15_000): Promise<TValue> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
