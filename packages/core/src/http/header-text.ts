import { isUtf8 } from 'node:buffer';
import type { Request } from 'express';

/**
 * A request header that carries text (a user name, a password) read as clients send text: in
 * UTF-8, as Basic credentials are read. Node hands header bytes on one a character (ISO-8859-1),
 * so `jürgen` would arrive as `jÃ¼rgen`; bytes that are no UTF-8 are read as Node reads them.
 * Undefined when the header is absent.
 */
export function headerText(req: Request, name: string): string | undefined {
  const value = req.get(name);
  if (value === undefined || !/[^\x20-\x7e\t]/.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : value;
}
