import { defineEntity } from '../definition/define-entity';

/** The actions of the change log a webhook may ask for (CONTRACT §16). */
export const WEBHOOK_ACTIONS = ['Create', 'Update', 'Delete', 'Restore', 'Relate', 'Unrelate'] as const;

export const DELIVERY_STATUSES = ['Pending', 'Delivered', 'Failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * A subscription of an outside URL to changes (CONTRACT §16), admins only. `entityTypes` and
 * `actions` filter the changes (empty or absent: all); `secret` signs every delivery and is
 * never returned.
 */
export const WebhookEntity = defineEntity({
  name: 'Webhook',
  description: 'A URL that gets every matching change as a signed POST (admins only).',
  fields: {
    name: { type: 'varchar', required: true, maxLength: 255 },
    url: { type: 'varchar', required: true, maxLength: 2048, description: 'An absolute http or https URL; its host passes the address guard on every attempt.' },
    entityTypes: { type: 'multiEnum', description: 'The entity types whose changes it gets; empty: all.' },
    actions: { type: 'multiEnum', options: WEBHOOK_ACTIONS, description: 'The actions it gets; empty: all.' },
    secret: { type: 'varchar', required: true, writeOnly: true, maxLength: 255, description: 'Signs every delivery (X-Webhook-Signature); never returned.' },
    isActive: { type: 'bool', default: true },
  },
});

/**
 * One change on its way to one webhook. The server writes it in the transaction of the change
 * and updates it with every attempt; clients only read it (and ask for it again with
 * `POST /WebhookDelivery/{id}/redeliver`). The hidden fields are the queue's: when the next
 * attempt is due and until when a worker holds it (ms since the epoch), and that worker's lease.
 */
export const WebhookDeliveryEntity = defineEntity({
  name: 'WebhookDelivery',
  description: 'One change sent (or being sent) to one webhook (admins only; written by the server).',
  serverWritten: true,
  fields: {
    webhook: { type: 'link', entity: 'Webhook', readOnly: true },
    seq: { type: 'float', readOnly: true, description: 'The seq of the change in the change log.' },
    entityType: { type: 'varchar', readOnly: true, maxLength: 64 },
    recordId: { type: 'varchar', readOnly: true, maxLength: 64 },
    action: { type: 'enum', options: WEBHOOK_ACTIONS, readOnly: true },
    status: { type: 'enum', options: DELIVERY_STATUSES, readOnly: true, default: 'Pending' },
    attempts: { type: 'int', readOnly: true, default: 0 },
    lastStatusCode: { type: 'int', readOnly: true, description: 'The HTTP status of the last answer; null when none came.' },
    lastError: { type: 'text', readOnly: true, description: 'Why the last attempt failed; null after a delivery.' },
    nextAttemptAt: { type: 'datetime', readOnly: true, description: 'When the next attempt is due (Pending).' },
    deliveredAt: { type: 'datetime', readOnly: true },
    dueAt: { type: 'float', readOnly: true, writeOnly: true },
    lockedUntil: { type: 'float', readOnly: true, writeOnly: true },
    lease: { type: 'varchar', readOnly: true, writeOnly: true, maxLength: 64 },
  },
  uniqueIndexes: { webhook_seq: ['webhook', 'seq'] },
});
