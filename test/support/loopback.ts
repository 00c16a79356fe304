import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server of `handler` on a free loopback port, for tests that need a real socket. */
export interface LoopbackServer {
  port: number;
  close(): void;
}

export async function serveOnLoopback(handler: http.RequestListener): Promise<LoopbackServer> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
