import { systemContext, type EntityApi } from '@entity-records/core';
import type { Express } from 'express';

/**
 * @openapi
 * /health:
 *   get:
 *     operationId: health
 *     tags: [Health]
 *     summary: Whether the server is up and its database answers
 *     description: Needs no token. Meant for load balancers and container health checks.
 *     security: []
 *     responses:
 *       '200':
 *         description: The server and its database answer.
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/Health' }
 *       '503':
 *         description: The database does not answer; `Retry-After` says when to ask again.
 *         content:
 *           application/json:
 *             schema: { $ref: '#/components/schemas/Health' }
 * components:
 *   schemas:
 *     Health:
 *       type: object
 *       required: [status]
 *       properties:
 *         status: { type: string, enum: [ok, unavailable] }
 * tags:
 *   - name: Health
 *     description: Liveness of the example server.
 */
export function mountHealth(app: Express, api: EntityApi): void {
  app.get('/health', async (_req, res) => {
    try {
      await api.ready();
      await api.repository('Role').find(systemContext(), { totalOnly: true });
      res.json({ status: 'ok' });
    } catch {
      // As every 503 of the API: when to ask again.
      res.status(503).setHeader('Retry-After', '5').json({ status: 'unavailable' });
    }
  });
}

/** The files whose `@openapi` blocks describe the routes above (the compiled file at run time). */
export const HEALTH_OPENAPI_FILES = [__filename];
