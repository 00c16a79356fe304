import type { GenerationName } from '../generations';
import type { Request, RequestHandler } from 'express';
import { ApiError } from '../errors';
import type { RequestEvent, RequestHook } from '../hooks';
import type { Languages } from '../languages';
import { queryOf } from './list-params';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

export interface RequestOptionsParts {
  languages: Languages;
  /** Plugins' `onRequest` hooks, in registration order. */
  hooks: readonly RequestHook[];
}

/** `true` or `1` (any case) turns a header on; any other value does not. */
const isOn = (req: Request, header: string) => ['true', '1'].includes((req.get(header) ?? '').trim().toLowerCase());

/**
 * The header `language`: a code of the instance's languages or `main`; anything else is 400. An
 * instance without languages does not read it.
 */
function language(req: Request, languages: Languages): string | undefined {
  const value = req.get('language')?.trim();
  if (!value || languages.codes.length === 0) return undefined;
  const code = languages.resolve(value);
  if (code === undefined) {
    throw new ApiError('CORE_INVALID_LANGUAGE', `Unknown language '${value}'; this instance has ${languages.codes.join(', ')} (or main)`, {
      details: { language: value, languages: [...languages.codes] },
    });
  }
  return code;
}

function requestEvent(req: Request, generation: GenerationName): RequestEvent {
  return {
    ctx: requestContext(req),
    generation,
    method: req.method,
    path: req.path,
    header: (name) => req.get(name),
    get query() {
      return queryOf(req);
    },
  };
}

/**
 * Reads what an authenticated request asks of its records (`With-Meta`, `language`,
 * `Flatten-Attributes`) into its context, then runs the plugins' `onRequest` hooks. Runs before any route.
 */
export function requestOptions(parts: RequestOptionsParts, generation: GenerationName): RequestHandler {
  return toHandler(async (req, _res, next) => {
    const ctx = requestContext(req);
    ctx.withMeta = isOn(req, 'with-meta');
    ctx.flattenAttributes = isOn(req, 'flatten-attributes');
    ctx.language = language(req, parts.languages);
    if (parts.hooks.length) {
      const event = requestEvent(req, generation);
      for (const hook of parts.hooks) await hook(event);
    }
    next();
  });
}
