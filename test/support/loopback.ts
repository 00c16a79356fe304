import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServer {
  port: number;
  close(): void;
}

/** An HTTP server of `handler` on a free loopback port, for tests that need a real socket. */
export function serveOnLoopback(handler: http.RequestListener): Promise<LoopbackServer> {
  return listenOnLoopback(http.createServer(handler));
}

/** `server` listening on a free loopback port; `close` ends its connections too. */
export async function listenOnLoopback(server: http.Server): Promise<LoopbackServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
