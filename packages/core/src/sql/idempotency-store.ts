import type { Database } from './database';
import type { AuxiliaryTable } from './schema-sync';

/**
 * Idempotency keys (CONTRACT §16): one row per user and key, shared by every process of the
 * database. The primary key makes the reservation atomic: of two requests inserting the same
 * (user, key), one inserts and the other finds the row. A row without `status` is a request still
 * running, whose `owner` renews `lease_until` while it runs; a row with one holds the answer.
 * Times in Unix ms.
 */
export const IDEMPOTENCY_TABLE: AuxiliaryTable = {
  name: 'idempotency_key',
  columns: {
    user_id: 'varchar(64) not null',
    idem_key: 'varchar(255) not null',
    // sha256 (hex) of the method, path and body of the request that took the key.
    fingerprint: 'varchar(64) not null',
    // Random per reservation: only the request that holds the row finishes, renews or releases it.
    owner: 'varchar(64) not null',
    created_at: 'bigint not null',
    lease_until: 'bigint not null',
    status: 'integer',
    headers: 'text',
    body: 'text',
  },
  primaryKey: ['user_id', 'idem_key'],
  indexes: [{ name: 'ix_idempotency_key_created', columns: ['created_at'] }],
};

const TABLE = IDEMPOTENCY_TABLE.name;

/** A row of the table, as the service reads it. */
export interface IdempotencyRow {
  fingerprint: string;
  owner: string;
  createdAt: number;
  leaseUntil: number;
  /** Undefined while the request that holds the key runs. */
  answer?: { status: number; headers: Record<string, string>; body: string };
}

/** Which row: the user and the key. */
export interface IdempotencyId {
  userId: string;
  key: string;
}

/** A new reservation: who holds it, for which request, since when and until when at least. */
export interface Reservation {
  fingerprint: string;
  owner: string;
  createdAt: number;
  leaseUntil: number;
}

const where = ({ userId, key }: IdempotencyId) => ({ user_id: userId, idem_key: key });

/** The SQL of idempotency keys. */
export class IdempotencyStore {
  constructor(private readonly database: Database) {}

  /** Inserts the reservation unless the key is taken; true when this call took it. */
  async reserve(id: IdempotencyId, reservation: Reservation): Promise<boolean> {
    const inserted = await this.database
      .knex(TABLE)
      .insert({ ...where(id), fingerprint: reservation.fingerprint, owner: reservation.owner, created_at: reservation.createdAt, lease_until: reservation.leaseUntil })
      .onConflict(['user_id', 'idem_key'])
      .ignore()
      .returning('owner');
    return inserted.length === 1;
  }

  async read(id: IdempotencyId): Promise<IdempotencyRow | undefined> {
    const row = await this.database.knex(TABLE).first('*').where(where(id));
    if (!row) return undefined;
    const answer = row.status === null || row.status === undefined ? undefined : { status: Number(row.status), headers: JSON.parse(String(row.headers ?? '{}')) as Record<string, string>, body: String(row.body ?? '') };
    return { fingerprint: row.fingerprint, owner: row.owner, createdAt: Number(row.created_at), leaseUntil: Number(row.lease_until), answer };
  }

  /**
   * Replaces the row that `seenOwner` held (a kept answer past its time, or a reservation whose
   * holder stopped renewing it) by a new reservation; true when this call won it.
   */
  async takeOver(id: IdempotencyId, { seenOwner, reservation }: { seenOwner: string; reservation: Reservation }): Promise<boolean> {
    const updated = await this.database
      .knex(TABLE)
      .where({ ...where(id), owner: seenOwner })
      .update({ fingerprint: reservation.fingerprint, owner: reservation.owner, created_at: reservation.createdAt, lease_until: reservation.leaseUntil, status: null, headers: null, body: null });
    return updated === 1;
  }

  /** Keeps the answer of the request that holds the key. */
  async finish(id: IdempotencyId, { owner, answer }: { owner: string; answer: NonNullable<IdempotencyRow['answer']> }): Promise<void> {
    await this.database
      .knex(TABLE)
      .where({ ...where(id), owner })
      .update({ status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body });
  }

  /** Moves the lease of a running request on. */
  async renew(id: IdempotencyId, { owner, leaseUntil }: { owner: string; leaseUntil: number }): Promise<void> {
    await this.database.knex(TABLE).where({ ...where(id), owner }).whereNull('status').update({ lease_until: leaseUntil });
  }

  /** Frees the key again (the request's answer is not kept): the next request with it runs. */
  async release(id: IdempotencyId, owner: string): Promise<void> {
    await this.database.knex(TABLE).where({ ...where(id), owner }).whereNull('status').delete();
  }

  /** Removes the rows made before `before`, but no reservation still renewed at `now`; answers how many. */
  async purge({ before, now }: { before: number; now: number }): Promise<number> {
    return this.database
      .knex(TABLE)
      .where('created_at', '<', before)
      .andWhere((q) => q.whereNotNull('status').orWhere('lease_until', '<', now))
      .delete();
  }
}
