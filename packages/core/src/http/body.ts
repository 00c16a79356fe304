import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors';

const JSON_TYPES = ['application/json', 'application/*+json'];

const hasBody = (headers: Record<string, unknown>) =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/**
 * Generation A refuses a body of any type but JSON (415). Generation B reads any body as JSON,
 * as its clients send it. `exempt` paths (multipart upload) are left to their own parser.
 */
export function jsonBody(options: { generation: 'A' | 'B'; limit: string | number; exempt?: (path: string) => boolean }): RequestHandler[] {
  const strictType: RequestHandler = (req, _res, next) => {
    if (options.exempt?.(req.path) || !hasBody(req.headers) || req.is(JSON_TYPES)) return next();
    next(new ApiError('CORE_UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json'));
  };
  const parse = express.json({ limit: options.limit, strict: true, type: () => true });
  const parseUnlessExempt: RequestHandler = (req, res, next) => (options.exempt?.(req.path) ? next() : parse(req, res, next));
  return options.generation === 'A' ? [strictType, parseUnlessExempt] : [parseUnlessExempt];
}
