import type { Request } from 'express';
import type { RequestContext } from '../context';

const CONTEXT = Symbol.for('@entity-records/core/context');

type WithContext = Request & { [CONTEXT]?: RequestContext };

/** The context of a request, made on first use; the auth middleware fills in the user. */
export function requestContext(req: Request): RequestContext {
  const r = req as WithContext;
  r[CONTEXT] ??= { variables: {}, generation: 'A' };
  return r[CONTEXT];
}
