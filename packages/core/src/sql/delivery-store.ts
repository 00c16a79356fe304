import type { Knex } from 'knex';
import { formatDateTime, nowDateTime } from '../time';
import { chunks } from '../util/chunks';
import { uuidv7 } from '../util/uuid';
import type { WebhookTargets } from './change-routing';
import type { Connection } from './database';
import { runText, type TextStatement } from './prepared';
import type { AuxiliaryTable } from './schema-sync';
import type { SqlContext } from './sql-context';

/**
 * The SQL of webhook deliveries (CONTRACT §16): the rows of the `WebhookDelivery` entity, written
 * in the transaction of the changes they carry (`insertDeliveries`), claimed by workers of any
 * process with a lease (`claimDeliveries`), finished after each attempt (`finishAttempt`), and
 * queued again on request (`redeliver`). The table is the queue: a worker that dies leaves a
 * lease that runs out, and another worker (or the same process restarted) takes the row again.
 */

const DELIVERY = 'webhook_delivery';
const WEBHOOK = 'webhook';
const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The indexes the queue reads by, beside the entity's own (schema sync adds them to its table). */
export const DELIVERY_INDEXES: AuxiliaryTable = {
  name: DELIVERY,
  ofEntity: true,
  columns: {},
  primaryKey: [],
  indexes: [
    { name: 'ix_webhook_delivery_due', columns: ['status', 'due_at'] },
    { name: 'ix_webhook_delivery_record', columns: ['webhook_id', 'entity_type', 'record_id', 'seq'] },
  ],
};

/** An active webhook as the routing keeps it: which changes it wants (undefined: all). */
export interface ActiveWebhook {
  id: string;
  entityTypes?: ReadonlySet<string>;
  actions?: ReadonlySet<string>;
}

/** A webhook as a delivery needs it. */
export interface WebhookTarget {
  id: string;
  url: string;
  secret: string;
  isActive: boolean;
}

/** A delivery a worker holds. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  seq: number;
  /** Attempts made, this one included. */
  attempts: number;
}

/** How an attempt ended. */
export type AttemptOutcome =
  | { delivered: true; statusCode: number }
  | { delivered: false; statusCode: number | null; error: string; retryAt?: number; countAttempt?: boolean };

const listOf = (value: unknown): ReadonlySet<string> | undefined => {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(parsed) && parsed.length > 0 ? new Set(parsed.map(String)) : undefined;
};

/** The active webhooks, read on `db` (a write's transaction sees its own webhooks). */
export async function activeWebhooks(sql: SqlContext): Promise<ActiveWebhook[]> {
  const rows = await sql.db(WEBHOOK).select('id', 'entity_types', 'actions').where({ is_active: sql.dialect.toDb('bool', true), deleted: sql.dialect.live });
  return rows.map((row: Record<string, unknown>) => ({ id: row.id as string, entityTypes: listOf(row.entity_types), actions: listOf(row.actions) }));
}

/** The changes just logged, as the insert returned them. */
export interface LoggedChange {
  seq: number;
  entityType: string;
  recordId: string;
  action: string;
}

/** The table of deliveries, for the statements of other stores that read it. */
export const DELIVERY_TABLE = DELIVERY;

/**
 * Writes one pending delivery per change and webhook that wants it, in the caller's transaction,
 * one `insert … select` per recordset: a webhook that is no longer active (or was removed) by the
 * time the transaction writes gets none. With `again`, the changes were logged earlier and another
 * process may have written some of their deliveries meanwhile: the unique index of webhook and
 * seq keeps those, and no second one is written. Answers how many rows it offered.
 */
export async function insertDeliveries(
  sql: SqlContext,
  { changes, targets, again = false }: { changes: readonly LoggedChange[]; targets: WebhookTargets; again?: boolean },
): Promise<number> {
  const now = Date.now();
  const at = formatDateTime(new Date(now));
  const rows = [...changes]
    .sort((a, b) => a.seq - b.seq)
    .flatMap((c) =>
      targets(c).map((webhookId) => ({
        id: uuidv7(),
        webhook_id: webhookId,
        seq: c.seq,
        entity_type: c.entityType,
        record_id: c.recordId,
        action: c.action,
        status: 'Pending',
        attempts: 0,
        next_attempt_at: at,
        due_at: now,
        created_at: at,
        modified_at: at,
      })),
    );
  const columns = Object.keys(rows[0] ?? {});
  const { dialect } = sql;
  for (const part of chunks(rows, dialect.recordsetRows(columns.length))) {
    const set = dialect.recordset(part, { table: DELIVERY, columns });
    // Compiled once per recordset shape, as the changes' own insert: on SQLite, knex would build
    // and prepare a statement of thousands of values anew for every part.
    const insert: TextStatement = {
      method: 'count',
      key: `deliveries${again ? ':again' : ''}:${set.key}`,
      text: () =>
        `insert into ${q(DELIVERY)} (${columns.map(q).join(', ')}) select ${columns.map(set.value).join(', ')} from ${set.from} ` +
        `join ${q(WEBHOOK)} w on w.id = ${set.value('webhook_id')} and w.is_active = ${dialect.bool(true)} and w.deleted = ${dialect.bool(false)}` +
        // SQLite reads `on conflict` after a join's `on` only behind a `where`.
        (again ? ' where 1 = 1 on conflict do nothing' : ''),
    };
    await runText(sql, insert, set.bindings);
  }
  return rows.length;
}

/** Pending deliveries that are due and held by no worker, oldest change first, none behind an earlier one of its record. */
function claimable(sql: SqlContext, { now, limit }: { now: number; limit: number }): { sql: string; bindings: Knex.RawBinding[] } {
  const live = sql.dialect.live;
  return {
    sql:
      `select d.id from ${q(DELIVERY)} d where d.status = 'Pending' and d.deleted = ? and d.due_at <= ? and (d.locked_until is null or d.locked_until < ?) ` +
      `and not exists (select 1 from ${q(DELIVERY)} e where e.webhook_id = d.webhook_id and e.entity_type = d.entity_type and e.record_id = d.record_id ` +
      `and e.status = 'Pending' and e.deleted = ? and e.seq < d.seq) order by d.seq limit ? ${sql.dialect.skipLocked}`,
    bindings: [live, now, now, live, limit],
  };
}

/**
 * Takes up to `limit` due deliveries for this worker until `leaseMs` from now, counting the
 * attempt (a change of the record: its version moves). Workers of several processes each take
 * other rows (the dialect's `skipLocked`); one whose process dies leaves a lease that runs out.
 */
export async function claimDeliveries(sql: SqlContext, { lease, leaseMs, limit }: { lease: string; leaseMs: number; limit: number }): Promise<ClaimedDelivery[]> {
  const now = Date.now();
  const select = claimable(sql, { now, limit });
  const result = await sql.db.raw(
    `update ${q(DELIVERY)} set locked_until = ?, lease = ?, attempts = attempts + 1, record_version = record_version + 1 where id in (${select.sql}) returning id, webhook_id, seq, attempts`,
    [now + leaseMs, lease, ...select.bindings],
  );
  return sql.dialect
    .rawRows(result)
    .map((row) => ({ id: row.id as string, webhookId: row.webhook_id as string, seq: Number(row.seq), attempts: Number(row.attempts) }))
    .sort((a, b) => a.seq - b.seq);
}

/** The webhooks of some deliveries (live ones; a removed webhook is missing). */
export async function webhookTargets(sql: SqlContext, ids: readonly string[]): Promise<Map<string, WebhookTarget>> {
  const rows = await sql.db(WEBHOOK).select('id', 'url', 'secret', 'is_active').whereIn('id', [...new Set(ids)]).andWhere('deleted', sql.dialect.live as never);
  return new Map(rows.map((r: Record<string, unknown>) => [r.id as string, { id: r.id as string, url: r.url as string, secret: r.secret as string, isActive: sql.dialect.fromDb('bool', r.is_active) === true }]));
}

/**
 * Records how an attempt ended, if this worker still holds the delivery (a worker whose lease ran
 * out and was taken over changes nothing): delivered, due again at `retryAt`, or failed for good.
 */
export async function finishAttempt(sql: SqlContext, { id, lease, outcome }: { id: string; lease: string; outcome: AttemptOutcome }): Promise<void> {
  const at = nowDateTime();
  const common = { locked_until: null, lease: null, modified_at: at, last_status_code: outcome.statusCode };
  const values: Record<string, unknown> = outcome.delivered
    ? { ...common, status: 'Delivered', delivered_at: at, last_error: null, next_attempt_at: null, due_at: null }
    : outcome.retryAt !== undefined
      ? { ...common, last_error: outcome.error, next_attempt_at: formatDateTime(new Date(outcome.retryAt)), due_at: outcome.retryAt }
      : { ...common, status: 'Failed', last_error: outcome.error, next_attempt_at: null, due_at: null };
  if (!outcome.delivered && outcome.countAttempt === false) values.attempts = sql.db.raw('attempts - 1');
  values.record_version = sql.db.raw('record_version + 1');
  await sql.db(DELIVERY).update(values).where({ id, lease });
}

/**
 * Queues a delivery again, due now, with a fresh count of attempts; answers whether it exists.
 * A worker holding it meanwhile records nothing (its lease is gone). The delivery stays held
 * under `hold.lease` for `hold.ms`, so that no worker takes it before the caller has read it as
 * queued; `release` lets the workers have it (a caller that dies leaves a hold that runs out).
 */
export async function redeliver(sql: SqlContext, id: string, hold: { lease: string; ms: number }): Promise<boolean> {
  const now = Date.now();
  const at = formatDateTime(new Date(now));
  const count = await sql.db(DELIVERY)
    .update({ status: 'Pending', attempts: 0, due_at: now, next_attempt_at: at, delivered_at: null, locked_until: now + hold.ms, lease: hold.lease, modified_at: at, record_version: sql.db.raw('record_version + 1') })
    .where({ id, deleted: sql.dialect.live });
  return count > 0;
}

/** Ends the hold `redeliver` left on a delivery (the record does not change: its version stays). */
export async function release(sql: SqlContext, id: string, lease: string): Promise<void> {
  await sql.db(DELIVERY).update({ locked_until: null, lease: null }).where({ id, lease });
}

/**
 * When a worker should look again (ms since the epoch): the earliest time a pending delivery that
 * waits for no earlier one of its record is due, or its lease runs out; undefined without one.
 */
export async function nextDue(sql: SqlContext): Promise<number | undefined> {
  const live = sql.dialect.live;
  const now = Date.now();
  const result = await sql.db.raw(
    `select min(case when d.locked_until is not null and d.locked_until > ? then d.locked_until else d.due_at end) as due from ${q(DELIVERY)} d ` +
      `where d.status = 'Pending' and d.deleted = ? and not exists (select 1 from ${q(DELIVERY)} e where e.webhook_id = d.webhook_id ` +
      `and e.entity_type = d.entity_type and e.record_id = d.record_id and e.status = 'Pending' and e.deleted = ? and e.seq < d.seq)`,
    [now, live, live],
  );
  const due = sql.dialect.rawRows(result)[0]?.due;
  return due === null || due === undefined ? undefined : Number(due);
}

/** Hands a delivery back unattempted (its worker stops): due again at once, the attempt not counted (a new version again). */
export async function releaseDelivery(sql: SqlContext, { id, lease }: { id: string; lease: string }): Promise<void> {
  await sql.db(DELIVERY).update({ locked_until: null, lease: null, attempts: sql.db.raw('attempts - 1'), record_version: sql.db.raw('record_version + 1') }).where({ id, lease });
}

/** Removes finished deliveries last changed before `before` (`YYYY-MM-DD HH:MM:SS`); answers how many. */
export async function purgeDeliveries(sql: SqlContext, before: string): Promise<number> {
  return sql.db(DELIVERY).whereIn('status', ['Delivered', 'Failed']).andWhere('modified_at', '<', before).delete();
}

/** Whether a connection is the pool or a transaction (a delivery insert needs one with its changes). */
export const isTransaction = (db: Connection): boolean => (db as Knex.Transaction).isTransaction === true;
