import { nowDateTime, type EntityApi, type EntityModel } from '@entity-records/core';

/** What the public link needs of a sharing and its file, read past the API's permission checks. */
export interface ShareState {
  id: string;
  live: boolean;
  active: boolean;
  validTill: string | null;
  allowedUsage: number | null;
  used: number;
  passwordHash: string | null;
  /** Who made the sharing: it works only while that user is active. */
  createdById: string | null;
  file?: { id: string; name: string; mimeType: string | null; size: number | null; hash: string; storageKey: string };
}

const col = (model: EntityModel, field: string) => model.field.get(field)?.column as string;

/** A select entry for each field, named after the field: `{ field: 'alias.column' }`. */
const fieldColumns = (alias: string, model: EntityModel, fields: string[]) =>
  Object.fromEntries(fields.map((field) => [field, `${alias}.${col(model, field)}`]));

/** The SQL of public links: one read, and one atomic counting update shared by every process. */
export class SharingStore {
  constructor(private readonly instance: () => EntityApi) {}

  private models() {
    const { schema } = this.instance();
    return { sharing: schema.entity('Sharing') as EntityModel, file: schema.entity('File') as EntityModel };
  }

  async state(id: string): Promise<ShareState | undefined> {
    const { database } = this.instance();
    const { sharing: s, file: f } = this.models();
    const { dialect, knex } = database;
    const row = await knex(`${s.table} as s`)
      .leftJoin(`${f.table} as f`, (j) => void j.on(`f.id`, '=', `s.${col(s, 'file')}`).andOn(`f.deleted`, '=', knex.raw('?', [dialect.toDb('bool', false) as boolean])))
      .select({
        id: 's.id',
        deleted: 's.deleted',
        createdById: 's.created_by_id',
        ...fieldColumns('s', s, ['active', 'validTill', 'allowedUsage', 'used', 'password']),
        fileId: 'f.id',
        fileName: `f.${col(f, 'name')}`,
        ...fieldColumns('f', f, ['mimeType', 'fileSize', 'hash', 'storageKey']),
      })
      .where('s.id', id)
      .first();
    if (!row) return undefined;
    const bool = (v: unknown) => dialect.fromDb('bool', v) === true;
    return {
      id: row.id,
      live: !bool(row.deleted),
      active: bool(row.active),
      validTill: (row.validTill as string | null) ?? null,
      allowedUsage: row.allowedUsage === null ? null : Number(row.allowedUsage),
      used: Number(row.used ?? 0),
      passwordHash: row.password ?? null,
      createdById: row.createdById ?? null,
      ...(row.fileId && row.storageKey
        ? { file: { id: row.fileId, name: row.fileName, mimeType: row.mimeType, size: row.fileSize === null ? null : Number(row.fileSize), hash: row.hash, storageKey: row.storageKey } }
        : {}),
    };
  }

  /**
   * Counts one use, only while the sharing is live, active, not expired and not used up: one
   * statement, so concurrent downloads on any number of processes never exceed the limit.
   */
  async use(id: string): Promise<boolean> {
    const { knex, dialect } = this.instance().database;
    const { sharing: s } = this.models();
    const [used, allowed, till] = [col(s, 'used'), col(s, 'allowedUsage'), col(s, 'validTill')];
    const yes = dialect.toDb('bool', true) as boolean;
    const no = dialect.toDb('bool', false) as boolean;
    const count = await knex(s.table)
      .where({ id, deleted: no, [col(s, 'active')]: yes })
      .andWhere((w) => void w.whereNull(allowed).orWhere(used, '<', knex.ref(allowed)))
      .andWhere((w) => void w.whereNull(till).orWhere(till, '>', nowDateTime()))
      .update({ [used]: knex.raw('?? + 1', [used]) });
    return count === 1;
  }
}
