import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors';

/**
 * Answers requests that Node's HTTP parser refuses before any route sees them with the API's JSON
 * error body: a URL and headers over the server's `maxHeaderSize` are 431
 * `CORE_HEADERS_TOO_LARGE` (Node would send an empty 431); other malformed requests keep Node's
 * plain 400.
 *
 * @example
 * const server = http.createServer({ maxHeaderSize: 256 * 1024 }, app);
 * answerClientErrors(server);
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    if (error.code !== 'HPE_HEADER_OVERFLOW') {
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    const api = new ApiError('CORE_HEADERS_TOO_LARGE', 'The URL and headers are larger than the server accepts');
    const body = JSON.stringify(api.toJSON());
    const head = [
      `HTTP/1.1 ${api.status} Request Header Fields Too Large`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Status-Reason: ${api.message}`,
      'Connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
