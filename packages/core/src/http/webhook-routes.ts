import type { Router } from 'express';
import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import { sendRecord } from './record-routes';
import { requestContext } from './request-context';
import { toHandler } from './to-handler';

/** What the webhook routes call. */
export interface WebhookRouteParts {
  /** Queues a delivery again, due now (admins only); answers the delivery. */
  redeliver(ctx: RequestContext, id: string): Promise<ApiRecord>;
}

/** `POST /WebhookDelivery/{id}/redeliver` (CONTRACT §16): the delivery is attempted again, as if new; answers it (`Pending`). */
export function mountWebhookRoutes(router: Router, parts: WebhookRouteParts): void {
  router.post(
    '/WebhookDelivery/:id/redeliver',
    toHandler(async (req, res) => {
      sendRecord(res, await parts.redeliver(requestContext(req), req.params.id as string));
    }),
  );
}
