import type { Request } from 'express';
import type { RequestContext } from '../context';
import { ApiError } from '../errors';

const CONTEXT = Symbol.for('@entity-records/core/context');

type WithContext = Request & { [CONTEXT]?: RequestContext };

/** The context of a request, made on first use; the auth middleware fills in the user. */
export function requestContext(req: Request): RequestContext {
  const r = req as WithContext;
  r[CONTEXT] ??= { variables: {}, generation: 'A' };
  return r[CONTEXT];
}

const TRUE = new Set(['true', '1']);

/**
 * Headers that change how records read and write: `Flatten-Attributes` and `language` (a code of
 * the instance's languages or `main`; another code is 400 when the instance has languages).
 */
export function readRecordHeaders(req: Request, ctx: RequestContext, languages: readonly string[]): void {
  ctx.flattenAttributes = TRUE.has((req.get('flatten-attributes') ?? '').trim().toLowerCase());
  const language = req.get('language')?.trim();
  if (!language || languages.length === 0) return;
  if (language !== 'main' && !languages.includes(language)) {
    throw new ApiError('CORE_INVALID_LANGUAGE', `Unknown language '${language}'; this instance has ${languages.join(', ')} (or main)`, {
      details: { language, languages: [...languages] },
    });
  }
  ctx.language = language;
}
