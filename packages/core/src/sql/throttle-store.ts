import type { Database } from './database';
import type { AuxiliaryTable } from './schema-sync';

/** Failed sign-ins (by user name and by address) and the blocks they caused. Times in Unix ms. */
export const THROTTLE_TABLES: AuxiliaryTable[] = [
  {
    name: 'login_failure',
    columns: { id: 'varchar(64) not null', throttle_key: 'varchar(320) not null', at: 'bigint not null' },
    primaryKey: ['id'],
    indexes: [{ name: 'ix_login_failure_key_at', columns: ['throttle_key', 'at'] }],
  },
  {
    name: 'login_block',
    columns: { throttle_key: 'varchar(320) not null', until_at: 'bigint not null' },
    primaryKey: ['throttle_key'],
  },
];

/** The SQL of login throttling; shared by every process on one database. */
export class ThrottleStore {
  constructor(private readonly database: Database) {}

  /** The latest block end among the keys, when it is still in the future. */
  async blockedUntil(keys: readonly string[], now: number): Promise<number | undefined> {
    const row = await this.database.knex('login_block').max({ until: 'until_at' }).whereIn('throttle_key', keys).andWhere('until_at', '>', now).first();
    const until = row?.until;
    return until === null || until === undefined ? undefined : Number(until);
  }

  /** Records one failure (row `id`, at `now`) and answers how many the key has since `since`. */
  async addFailure(key: string, { id, now, since }: { id: string; now: number; since: number }): Promise<number> {
    const { knex } = this.database;
    await knex('login_failure').delete().where('throttle_key', key).andWhere('at', '<', since);
    await knex('login_failure').insert({ id, throttle_key: key, at: now });
    const row = await knex('login_failure').count({ n: '*' }).where('throttle_key', key).andWhere('at', '>=', since).first();
    return Number(row?.n ?? 0);
  }

  /** How many failures the key has since `since`. */
  async failures(key: string, since: number): Promise<number> {
    const row = await this.database.knex('login_failure').count({ n: '*' }).where('throttle_key', key).andWhere('at', '>=', since).first();
    return Number(row?.n ?? 0);
  }

  async block(key: string, until: number): Promise<void> {
    await this.database.knex('login_block').insert({ throttle_key: key, until_at: until }).onConflict('throttle_key').merge();
  }
}
