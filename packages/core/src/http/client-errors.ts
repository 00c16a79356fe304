import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors';

/**
 * Answers requests that Node's HTTP parser refuses before any route sees them with the API's JSON
 * error body (Node would send an empty one): a URL and headers over the server's `maxHeaderSize`
 * are 431 `CORE_HEADERS_TOO_LARGE`; any other malformed request (an unknown method, a broken
 * chunk, a bad header line) is 400 `CORE_MALFORMED_REQUEST`.
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
    const api =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('CORE_HEADERS_TOO_LARGE', 'The URL and headers are larger than the server accepts')
        : new ApiError('CORE_MALFORMED_REQUEST', 'The request is not well-formed HTTP');
    const body = JSON.stringify(api.toJSON());
    const head = [
      `HTTP/1.1 ${api.status} ${api.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Status-Reason: ${api.message}`,
      'Connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
