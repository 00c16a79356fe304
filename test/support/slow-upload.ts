import http from 'node:http';

/** A multipart upload sent piece by piece, so that it is in flight for a while. */
export interface SlowUpload {
  /** The answer, once the server sends one (rejects when the connection breaks). */
  answer: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>;
  /** Sends the rest of the body at once and ends it. */
  finish(): void;
  /** Breaks the connection mid-body. */
  abort(): void;
}

/**
 * Starts `POST <url>/api/File/upload` with a file of `size` bytes in the field `file`, sending
 * `pieces` parts of it `everyMs` apart; then it waits, the body unfinished, until `finish()`
 * (or sends the rest by itself when `pieces` covers the whole file).
 */
export function slowUpload(options: { url: string; token: string; name: string; size: number; pieces: number; everyMs: number; piecesOf?: number }): SlowUpload {
  const boundary = `----slow${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${options.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const total = options.piecesOf ?? options.pieces;
  const piece = Math.ceil(options.size / total);
  const req = http.request(`${options.url}/api/File/upload`, {
    method: 'POST',
    agent: false,
    headers: {
      'Authorization-Token': options.token,
      'Content-Type': `multipart/form-data; boundary=${boundary}`,
      'Content-Length': String(head.length + options.size + tail.length),
    },
  });
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  answer.catch(() => undefined);
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const rest = () => {
    clearTimeout(timer);
    if (sent < options.size) req.write(Buffer.alloc(options.size - sent, 1));
    sent = options.size;
    req.end(tail);
  };
  req.write(head);
  let count = 0;
  const next = () => {
    if (count >= options.pieces) return total === options.pieces ? rest() : undefined;
    const size = Math.min(piece, options.size - sent);
    req.write(Buffer.alloc(size, 1));
    sent += size;
    count += 1;
    timer = setTimeout(next, options.everyMs);
  };
  next();
  return {
    answer,
    finish: rest,
    abort() {
      clearTimeout(timer);
      req.destroy();
    },
  };
}

/** Whether a new connection to the server is refused (it stopped listening). */
export function refusesConnections(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      resolve(false);
    });
    req.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}
