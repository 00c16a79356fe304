import { errorResponses } from './error-responses';
import { ok, param, ref, type OperationId, type PathItem } from './refs';

/** `POST /WebhookDelivery/{id}/redeliver`: a delivery queued again (CONTRACT §16). */
export function redeliverPath(op: OperationId): PathItem {
  return {
    post: {
      operationId: op('redeliverWebhookDelivery'),
      tags: ['WebhookDelivery'],
      summary: 'Queue a webhook delivery again',
      description:
        'Admins only. The delivery becomes `Pending`, due now, with a fresh count of attempts (whatever its status was), and is attempted by a worker as soon as no earlier delivery of the same webhook and record is pending. Answers the delivery. No body is needed.',
      parameters: [param('id')],
      responses: { '200': ok('The delivery, queued again', ref('WebhookDelivery')), ...errorResponses() },
    },
  };
}
