import type { ContextUser } from '../context';
import type { EntityModel } from '../definition/normalize';
import type { Database } from './database';
import type { AuxiliaryTable } from './schema-sync';

/** Tokens: only the SHA-256 of a token is stored. Times are Unix milliseconds. */
export const TOKEN_TABLE: AuxiliaryTable = {
  name: 'auth_token',
  columns: {
    id: 'varchar(64) not null',
    token_hash: 'varchar(64) not null',
    user_id: 'varchar(64) not null',
    created_at: 'bigint not null',
    last_used_at: 'bigint not null',
    expires_at: 'bigint',
    idle_ms: 'bigint',
    actor_id: 'varchar(64)',
    // What the user's (and a delegated session's actor's) credentials were when the token was
    // issued (see AuthService): a token made from a password that has since changed is refused.
    credential_stamp: 'varchar(64)',
  },
  primaryKey: ['id'],
  indexes: [
    { name: 'uq_auth_token_hash', columns: ['token_hash'], unique: true },
    { name: 'ix_auth_token_user', columns: ['user_id'] },
  ],
};

export interface TokenRow {
  id: string;
  userId: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number | null;
  idleMs: number | null;
  /** Delegated sessions: the admin acting for `userId`. */
  actorId: string | null;
  /** See `credentialStamp` in AuthService; null for tokens issued before stamps were kept. */
  credentialStamp: string | null;
}

export interface StoredUser extends ContextUser {
  isActive: boolean;
  passwordHash: string | null;
}

/** The SQL of sign-in: users by name or id with their hash, and the token table. */
export class AuthStore {
  constructor(
    private readonly database: Database,
    private readonly users: EntityModel,
    private readonly roles: EntityModel,
  ) {}

  private userQuery() {
    const { knex, dialect } = this.database;
    const t = this.users.table;
    return knex(t)
      .select({ id: 'id', userName: 'user_name', name: 'name', isAdmin: 'is_admin', isActive: 'is_active', passwordHash: 'password' })
      .where('deleted', dialect.live as never);
  }

  private decode(row: Record<string, unknown> | undefined): StoredUser | undefined {
    if (!row) return undefined;
    const { dialect } = this.database;
    return {
      id: row.id as string,
      userName: row.userName as string,
      name: (row.name as string | null) ?? null,
      isAdmin: dialect.fromDb('bool', row.isAdmin) === true,
      isActive: dialect.fromDb('bool', row.isActive) !== false,
      passwordHash: (row.passwordHash as string | null) ?? null,
      rolesIds: [],
    };
  }

  async userByName(userName: string): Promise<StoredUser | undefined> {
    return this.decode(await this.userQuery().where('user_name', userName).first());
  }

  /** A user with the ids of their (live) roles. */
  async userById(id: string): Promise<StoredUser | undefined> {
    const user = this.decode(await this.userQuery().where('id', id).first());
    const roles = this.users.field.get('roles');
    const join = roles?.type === 'linkMultiple' && roles.linkKind === 'manyToMany' ? roles.join : undefined;
    if (user && join) {
      const rows = await this.database
        .knex({ j: join.table })
        .join({ r: this.roles.table }, 'r.id', `j.${join.targetColumn}`)
        .select({ id: 'r.id' })
        .where(`j.${join.ownColumn}`, id)
        .andWhere('r.deleted', this.database.dialect.live as never)
        .orderBy('r.id');
      user.rolesIds = rows.map((r: { id: string }) => r.id);
    }
    return user;
  }

  async insertToken(row: TokenRow & { hash: string }): Promise<void> {
    await this.database.knex(TOKEN_TABLE.name).insert({
      id: row.id,
      token_hash: row.hash,
      user_id: row.userId,
      created_at: row.createdAt,
      last_used_at: row.lastUsedAt,
      expires_at: row.expiresAt,
      idle_ms: row.idleMs,
      actor_id: row.actorId,
      credential_stamp: row.credentialStamp,
    });
  }

  async tokenByHash(hash: string): Promise<TokenRow | undefined> {
    const row = await this.database
      .knex(TOKEN_TABLE.name)
      .select({ id: 'id', userId: 'user_id', createdAt: 'created_at', lastUsedAt: 'last_used_at', expiresAt: 'expires_at', idleMs: 'idle_ms', actorId: 'actor_id', credentialStamp: 'credential_stamp' })
      .where('token_hash', hash)
      .first();
    if (!row) return undefined;
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    return {
      ...row,
      createdAt: Number(row.createdAt),
      lastUsedAt: Number(row.lastUsedAt),
      expiresAt: num(row.expiresAt),
      idleMs: num(row.idleMs),
      actorId: row.actorId ?? null,
      credentialStamp: row.credentialStamp ?? null,
    };
  }

  async touchToken(id: string, at: number): Promise<void> {
    await this.database.knex(TOKEN_TABLE.name).update({ last_used_at: at }).where('id', id);
  }

  async deleteToken(hash: string): Promise<void> {
    await this.database.knex(TOKEN_TABLE.name).delete().where('token_hash', hash);
  }

  async deleteUserTokens(userId: string): Promise<void> {
    await this.database.knex(TOKEN_TABLE.name).delete().where('user_id', userId).orWhere('actor_id', userId);
  }
}
