import swaggerJsdoc from 'swagger-jsdoc';
import { BootError } from '../errors';
import type { OpenApiFragment } from '../plugin';

/**
 * Reads the `@openapi` JSDoc blocks of the host's own route files (swagger-jsdoc), so that routes
 * the host mounts beside the API appear in the same document. Paths are as the host wrote them
 * (absolute, not repeated per generation). A block that is not valid YAML stops the start-up.
 *
 * @example
 * /**
 *  * @openapi
 *  * /health:
 *  *   get:
 *  *     operationId: health
 *  *     security: []
 *  *     responses: { '200': { description: The server is up } }
 *  *\/
 */
export function hostRoutesFragment(apis: readonly string[]): OpenApiFragment {
  if (apis.length === 0) return {};
  let spec: Record<string, unknown>;
  try {
    spec = swaggerJsdoc({ definition: { openapi: '3.1.0', info: { title: 'host routes', version: '0' } }, apis: [...apis], failOnErrors: true }) as Record<string, unknown>;
  } catch (error) {
    throw new BootError('CORE_CONFIG_INVALID', `openapi.apis: ${error instanceof Error ? error.message : String(error)}`);
  }
  const components = spec.components as OpenApiFragment['components'] | undefined;
  return {
    paths: (spec.paths ?? {}) as Record<string, unknown>,
    ...(components?.schemas && { components: { schemas: components.schemas } }),
    ...(Array.isArray(spec.tags) && { tags: spec.tags as OpenApiFragment['tags'] }),
  };
}
