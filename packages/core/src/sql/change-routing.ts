import type { Knex } from 'knex';
import type { Connection, Database } from './database';

/**
 * Where changes go besides the log: the webhooks that match them (CONTRACT §16). The write path
 * asks, for the changes it is about to log, which webhooks want each (entity type, action); the
 * answer comes from a list of the active webhooks each process keeps (events/webhook-directory),
 * so a write that no webhook wants costs no statement at all. Exports the interface and how an
 * instance's database gets its routing (`routeChanges`) and the write path finds it (`routingOf`).
 */
export interface ChangeRouting {
  /**
   * The ids of the active webhooks that want changes of this kind, or undefined when none wants
   * any of `changes`. Reads the list through `db` (the write's own transaction) when this process
   * does not know it yet.
   */
  targets(db: Connection, changes: readonly ChangeKind[]): Promise<WebhookTargets | undefined>;
  /** `changes` were logged on `db`, and with them `deliveries` deliveries (what follows waits for the commit). */
  written(db: Connection, what: { changes: readonly ChangeKind[]; deliveries: number }): void;
}

/** What decides which webhooks want a change. */
export interface ChangeKind {
  entityType: string;
  action: string;
}

/** The ids of the webhooks that want a change of this kind (empty: none). */
export type WebhookTargets = (change: ChangeKind) => readonly string[];

const routings = new WeakMap<Knex, ChangeRouting>();

/** Sets where the changes written on this database go. */
export function routeChanges(database: Database, routing: ChangeRouting): void {
  routings.set(database.knex, routing);
}

/** The routing of the changes written on this database, if it has one. */
export const routingOf = (database: Database): ChangeRouting | undefined => routings.get(database.knex);
