import BetterSqlite3 from 'better-sqlite3';
import { holdWriteLock } from '../../../../test/support/sqlite-lock';
import { ApiError, createEntityApi, defineEntity, systemContext, type EntityApi, type EntityDefinition } from '@entity-records/core';
import { TEST_DBS } from '../../../../test/support/databases';
import { databaseIndexes, instancesPerTest, silent } from '../../../../test/support/instances';

const Maker = defineEntity({
  name: 'Maker',
  fields: {
    name: { type: 'varchar', required: true, unique: true },
    gadgets: { type: 'linkMultiple', entity: 'Gadget', foreign: 'maker' },
  },
});
const Part = defineEntity({ name: 'Part', fields: { code: { type: 'varchar', maxLength: 40 } } });
const gadget = (extra: EntityDefinition['fields'] = {}) =>
  defineEntity({
    name: 'Gadget',
    fields: {
      name: { type: 'varchar', required: true },
      sku: { type: 'varchar', unique: true },
      mpn: { type: 'varchar' },
      maker: { type: 'link', entity: 'Maker' },
      parts: { type: 'linkMultiple', entity: 'Part' },
      related: { type: 'linkMultiple', entity: 'Gadget' },
      ...extra,
    },
    uniqueIndexes: { maker_mpn: ['maker', 'mpn'] },
  });
const V1 = [Maker, Part, gadget()];
const GROWN = {
  weight: { type: 'float' },
  notes: { type: 'text' },
  gtin: { type: 'varchar', unique: true },
  accessories: { type: 'linkMultiple', entity: 'Part', relationName: 'gadget_accessory' },
} as const;
const V2 = [Maker, Part, gadget(GROWN)];

const ctx = systemContext();

const indexes = databaseIndexes;

async function columns(api: EntityApi, table: string): Promise<string[]> {
  return Object.keys(await api.database.knex(table).columnInfo()).sort();
}

describe.each(TEST_DBS)('schema sync on %s', (kind) => {
  const instances = instancesPerTest(kind);
  const start = (entities: readonly EntityDefinition[]) => instances.track(createEntityApi({ database: instances.db.url, entities, logger: silent }));
  const stop = (api: EntityApi) => instances.stop(api);

  it('creates tables, columns, join tables and indexes', async () => {
    const api = start(V1);
    await api.ready();
    const knex = api.database.knex;
    for (const table of ['maker', 'part', 'gadget', 'user', 'extensible_enum', 'auth_token']) expect(await knex.schema.hasTable(table)).toBe(true);
    // system columns as the runtime model has them, then the definition's own columns
    const system = (api.schema.entity('Gadget')?.fields ?? []).filter((f) => f.system).map((f) => f.column as string);
    expect(system).toEqual(expect.arrayContaining(['id', 'created_at', 'modified_at', 'created_by_id', 'modified_by_id']));
    expect(await columns(api, 'gadget')).toEqual([...system, 'deleted', 'maker_id', 'mpn', 'name', 'record_version', 'sku'].sort());
    // has-many is stored on the other side: no column, no join table
    expect(await columns(api, 'maker')).toEqual([...system, 'deleted', 'name', 'record_version'].sort());
    const gadgetModel = api.schema.entity('Gadget');
    expect(gadgetModel?.field.get('parts')).toMatchObject({ join: { table: 'gadget_parts__part', ownColumn: 'gadget_id', targetColumn: 'part_id' } });
    expect(gadgetModel?.field.get('related')).toMatchObject({ join: { table: 'gadget_related__gadget', ownColumn: 'source_id', targetColumn: 'related_id' } });
    expect(await columns(api, 'gadget_parts__part')).toEqual(['gadget_id', 'part_id']);
    expect(await columns(api, 'gadget_related__gadget')).toEqual(['related_id', 'source_id']);

    const found = await indexes(api);
    expect(found.get('uq_gadget_sku')).toMatch(/unique index .*\(.?sku.?\) where .*deleted.* = (false|0)/i);
    expect(found.get('uq_gadget_maker_mpn')).toMatch(/unique index .*\(.?maker_id.?, .?mpn.?\) where .*deleted/i);
    expect(found.get('uq_maker_name')).toMatch(/where .*deleted/i);
    expect(found.has('ix_gadget_maker_id')).toBe(true);
    expect(found.has('ix_gadget_parts__part_gadget_id')).toBe(true);
    expect(found.has('ix_gadget_parts__part_part_id')).toBe(true);
    // the pair is the join table's key: a pair stored twice is refused
    await knex('gadget_parts__part').insert({ gadget_id: 'g', part_id: 'p' });
    // (checked by code: the driver's error class may come from another realm than jest's Error)
    const code = await knex('gadget_parts__part')
      .insert({ gadget_id: 'g', part_id: 'p' })
      .then(() => 'stored twice', (error: { code?: string }) => String(error.code));
    expect(code).toMatch(/^(SQLITE_CONSTRAINT|23505)/);
  });

  it('keeps unique values unique among live rows only; NULLs never collide', async () => {
    const api = start(V1);
    await api.ready();
    const gadgets = api.repository('Gadget');
    const first = await gadgets.create(ctx, { name: 'One', sku: 'S-1' });
    await expect(gadgets.create(ctx, { name: 'Two', sku: 'S-1' })).rejects.toMatchObject({ code: 'CORE_UNIQUE_VIOLATION' });
    await gadgets.delete(ctx, first.id);
    const second = await gadgets.create(ctx, { name: 'Two', sku: 'S-1' });
    await gadgets.delete(ctx, second.id);
    await gadgets.create(ctx, { name: 'Three', sku: 'S-1' });
    const [{ n }] = await api.database.knex('gadget').where({ sku: 'S-1' }).count({ n: '*' });
    expect(Number(n)).toBe(3);

    // NULL in a unique field, or in one column of a unique index, never collides
    await gadgets.create(ctx, { name: 'No sku' });
    await gadgets.create(ctx, { name: 'No sku either', sku: null });
    await gadgets.create(ctx, { name: 'No maker', mpn: 'M-1' });
    await gadgets.create(ctx, { name: 'No maker either', mpn: 'M-1' });
    const maker = await api.repository('Maker').create(ctx, { name: 'Acme' });
    await gadgets.create(ctx, { name: 'Acme M-1', mpn: 'M-1', makerId: maker.id });
    const dup = await gadgets.create(ctx, { name: 'Acme M-1 again', mpn: 'M-1', makerId: maker.id }).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(ApiError);
    expect(dup).toMatchObject({ code: 'CORE_UNIQUE_VIOLATION', details: { entity: 'Gadget', fields: ['maker', 'mpn'] } });
  });

  it('adds columns, indexes and join tables when a definition grows; rows survive', async () => {
    const v1 = start(V1);
    await v1.ready();
    const row = await v1.repository('Gadget').create(ctx, { name: 'Kept', sku: 'K-1', mpn: 'M' });
    await stop(v1);

    const v2 = start(V2);
    const plan = await v2.schemaDiff();
    expect(plan.map((s) => s.description)).toEqual([
      'add column gadget.weight',
      'add column gadget.notes',
      'add column gadget.gtin',
      'unique index uq_gadget_gtin on gadget (gtin), live rows',
      'create join table gadget_accessory',
      'index ix_gadget_accessory_gadget_id',
      'index ix_gadget_accessory_part_id',
    ]);
    expect(plan[0].sql).toBe(`alter table "gadget" add column "weight" ${kind === 'postgres' ? 'double precision' : 'real'}`);
    await v2.ready();
    expect(await columns(v2, 'gadget')).toEqual(expect.arrayContaining(['weight', 'notes', 'gtin']));
    expect(await v2.database.knex.schema.hasTable('gadget_accessory')).toBe(true);
    const kept = await v2.repository('Gadget').get(ctx, row.id);
    expect(kept).toMatchObject({ name: 'Kept', sku: 'K-1', mpn: 'M', weight: null, notes: null, gtin: null, accessoriesIds: [] });
    const part = await v2.repository('Part').create(ctx, { code: 'P' });
    const updated = await v2.repository('Gadget').update(ctx, row.id, { weight: 1.5, gtin: 'G-1', accessoriesIds: [part.id] });
    expect(updated).toMatchObject({ weight: 1.5, gtin: 'G-1', accessoriesIds: [part.id] });
    expect(await v2.schemaDiff()).toEqual([]);
  });

  it('widens a varchar whose maxLength grew, and never narrows one', async () => {
    const memo = (maxLength: number) => [{ name: 'Memo', fields: { title: { type: 'varchar', maxLength } } }] as EntityDefinition[];
    const short = start(memo(10));
    await short.ready();
    await stop(short);

    const long = start(memo(20));
    const plan = await long.schemaDiff();
    // SQLite does not enforce varchar lengths; PostgreSQL does
    expect(plan).toEqual(
      kind === 'postgres'
        ? [{ description: 'widen column memo.title to varchar(20)', sql: 'alter table "memo" alter column "title" type varchar(20)' }]
        : [],
    );
    await long.ready();
    expect(await long.schemaDiff()).toEqual([]);
    expect((await long.repository('Memo').create(ctx, { title: 'x'.repeat(20) })).title).toHaveLength(20);
    await stop(long);

    const shorter = start(memo(5));
    expect(await shorter.schemaDiff()).toEqual([]);
  });

  it('drops nothing when a field or an entity is removed', async () => {
    const v2 = start(V2);
    await v2.ready();
    const row = await v2.repository('Gadget').create(ctx, { name: 'Kept', notes: 'long text', gtin: 'G-1' });
    await stop(v2);

    const shrunk = start([Maker, Part, gadget({ weight: { type: 'float' } })]);
    expect(await shrunk.schemaDiff()).toEqual([]);
    await shrunk.ready();
    expect(await columns(shrunk, 'gadget')).toEqual(expect.arrayContaining(['notes', 'gtin']));
    expect(await shrunk.database.knex.schema.hasTable('gadget_accessory')).toBe(true);
    const read = await shrunk.repository('Gadget').get(ctx, row.id);
    expect(read.name).toBe('Kept');
    expect(read).not.toHaveProperty('notes');
    await stop(shrunk);

    const back = start(V2);
    expect(await back.schemaDiff()).toEqual([]);
    expect(await back.repository('Gadget').get(ctx, row.id)).toMatchObject({ notes: 'long text', gtin: 'G-1' });
    const noGadget = start([Maker, Part].map((e) => (e === Maker ? { name: 'Maker', fields: { name: Maker.fields.name } } : e)));
    expect(await noGadget.schemaDiff()).toEqual([]);
  });

  it('stops the start, naming the step, when existing rows break a new unique field', async () => {
    const v1 = start(V1);
    await v1.ready();
    await v1.repository('Gadget').create(ctx, { name: 'Twin', mpn: 'A' });
    await v1.repository('Gadget').create(ctx, { name: 'Twin', mpn: 'B' });
    await stop(v1);
    const strict = start([Maker, Part, gadget({ name: { type: 'varchar', required: true, unique: true } })]);
    await expect(strict.ready()).rejects.toThrow(/^Schema sync failed to unique index uq_gadget_name on gadget \(name\), live rows: /);
    // the failed sync left nothing half done: the plan is the same as before
    expect((await strict.schemaDiff()).map((s) => s.description)).toEqual(['unique index uq_gadget_name on gadget (name), live rows']);
  });

  it('is idempotent: a second start plans no step and changes nothing', async () => {
    const first = start(V2);
    expect((await first.schemaDiff()).length).toBeGreaterThan(10);
    await first.ready();
    await first.ready();
    expect(await first.schemaDiff()).toEqual([]);
    const before = await indexes(first);
    await stop(first);
    const second = start(V2);
    expect(await second.schemaDiff()).toEqual([]);
    await second.ready();
    expect(await indexes(second)).toEqual(before);
  });

  if (kind === 'sqlite') {
    it('waits in turns of the event loop while another connection holds the write lock, then plans on what it wrote', async () => {
      const first = start(V1);
      await first.ready();
      await stop(first);
      const file = instances.db.url.slice('sqlite:'.length);
      const other = new BetterSqlite3(file);
      // Made before the lock is taken: making an instance compiles its definitions at once,
      // which on a loaded machine would fill the time the lock is held (no turns to count).
      const api = start(V2);
      const lock = holdWriteLock(other, { ms: 500, write: (db) => db.exec('create table other_process (a int)') });
      try {
        await api.ready();
        // It finished after the other connection let go, and the process went on meanwhile: the
        // driver's own busy wait would have frozen it (no timer would have fired).
        expect(lock.released()).toBe(true);
        expect(lock.turns()).toBeGreaterThan(3);
        expect(await api.schemaDiff()).toEqual([]);
        expect(await api.database.knex.schema.hasTable('other_process')).toBe(true);
      } finally {
        lock.stop();
        other.close();
      }
    });
  }

  it('starts several instances on one database at once', async () => {
    // On SQLite, instances of one process share no lock: a write-first transaction waits in
    // SQLite's busy handler and blocks the event loop, so admin creation is raced on PostgreSQL only.
    const admin = kind === 'postgres' ? { userName: 'admin', password: 'same-for-all' } : undefined;
    const apis = Array.from({ length: 4 }, () => instances.track(createEntityApi({ database: instances.db.url, entities: V2, logger: silent, admin })));
    await Promise.all(apis.map((a) => a.ready()));
    for (const api of apis) expect(await api.schemaDiff()).toEqual([]);
    expect(await columns(apis[0], 'gadget')).toEqual(expect.arrayContaining(['weight', 'notes', 'gtin']));
    if (admin) {
      const admins = await apis[0].repository('User').find(ctx, { where: [{ type: 'equals', attribute: 'userName', value: 'admin' }] });
      expect(admins.total).toBe(1);
    }
  });
});
