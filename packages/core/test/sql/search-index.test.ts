import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { createEntityApi, defineEntity, systemContext, type EntityApi, type EntityApiOptions, type EntityDefinition } from '@entity-records/core';
import { TEST_DBS } from '../../../../test/support/databases';
import { databaseIndexes, instancesPerTest, silent } from '../../../../test/support/instances';

const note = (searchable: boolean): EntityDefinition =>
  defineEntity({
    name: 'Note',
    fields: {
      title: { type: 'varchar', ...(searchable && { searchable: true }) },
      body: { type: 'text', ...(searchable && { searchable: true }) },
      code: { type: 'varchar', unique: true },
      author: { type: 'link', entity: 'User' },
    },
  });

const onNote = (found: Map<string, string>) => [...found].filter(([name]) => name.includes('note')).map(([name]) => name).sort();

describe.each(TEST_DBS)('search indexes of searchable fields on %s', (kind) => {
  const instances = instancesPerTest(kind);
  // pg-boss would need to create its own schema: the restricted role below may not.
  const start = (definitions: EntityDefinition[], logger: EntityApiOptions['logger'] = silent, url = instances.db.url) =>
    instances.track(createEntityApi({ database: url, entities: definitions, logger, jobs: { queue: 'in-process' } }));
  const stop = (api: EntityApi) => instances.stop(api);
  const indexes = databaseIndexes;

  it('are added to an existing database for searchable fields only, once', async () => {
    const before = start([note(false)]);
    await before.ready();
    await before.repository('Note').create(systemContext(), { title: 'Kept', body: 'Some text', code: 'k' });
    const plain = onNote(await indexes(before));
    expect(plain.some((name) => name.startsWith('search_'))).toBe(false);
    await stop(before);

    const searchable = start([note(true)]);
    const plan = await searchable.schemaDiff();
    if (kind === 'sqlite') {
      // SQLite gets no search index (bench/README.md, "Text search"): nothing to do.
      expect(plan).toEqual([]);
      await searchable.ready();
      expect(onNote(await indexes(searchable))).toEqual(plain);
      return;
    }
    expect(plan).toEqual([
      { description: 'extension pg_trgm', sql: 'create extension if not exists "pg_trgm"', extension: 'pg_trgm' },
      { description: 'search index search_note_title on note (title)', sql: 'create index "search_note_title" on "note" using gin (lower("title") gin_trgm_ops)', needs: 'pg_trgm' },
      { description: 'search index search_note_body on note (body)', sql: 'create index "search_note_body" on "note" using gin (lower("body") gin_trgm_ops)', needs: 'pg_trgm' },
    ]);
    await searchable.ready();
    const found = await indexes(searchable);
    expect(found.get('search_note_title')).toMatch(/USING gin \(lower\(\(title\)::text\) gin_trgm_ops\)/);
    expect(found.get('search_note_body')).toMatch(/USING gin \(lower\(body\) gin_trgm_ops\)/);
    // Fields without the option (a varchar, a unique varchar, a link) get none.
    expect(onNote(found)).toEqual([...plain, 'search_note_body', 'search_note_title'].sort());
    expect(await searchable.schemaDiff()).toEqual([]);
    await stop(searchable);

    // Another start plans nothing and changes nothing.
    const again = start([note(true)]);
    expect(await again.schemaDiff()).toEqual([]);
    await again.ready();
    expect(await indexes(again)).toEqual(found);
    // The rows written before are found through the new index.
    const list = await again.repository('Note').find(systemContext(), { where: [{ type: 'contains', attribute: 'body', value: 'ME TE' }] });
    expect(list.list?.map((r) => r.title)).toEqual(['Kept']);
  });

  if (kind === 'postgres') {
    it('are skipped with a warning when the role may not create pg_trgm; the filters answer all the same', async () => {
      const role = `er_test_role_${randomBytes(4).toString('hex')}`;
      const name = new URL(instances.db.url).pathname.slice(1);
      const admin = knex({ client: 'pg', connection: instances.db.url, pool: { min: 0, max: 1 } });
      try {
        // A role that may create tables in the schema but not extensions in the database.
        await admin.raw(`create role "${role}" login`);
        await admin.raw(`grant usage, create on schema public to "${role}"`);
        const url = new URL(instances.db.url);
        url.username = role;
        const warnings: string[] = [];
        const logger = { ...silent, warn: (_details: unknown, message?: string) => void warnings.push(message ?? '') };
        const api = start([note(true)], logger, url.toString());
        await api.ready();
        expect(warnings).toEqual([expect.stringMatching(/^schema: could not create the pg_trgm extension \(.*permission denied.*\); skipped: search index search_note_title on note \(title\), search index search_note_body on note \(body\)$/)]);
        expect(onNote(await indexes(api)).filter((n) => n.startsWith('search_'))).toEqual([]);
        await api.repository('Note').create(systemContext(), { title: 'Found it', code: 'f' });
        const list = await api.repository('Note').find(systemContext(), { where: [{ type: 'contains', attribute: 'title', value: 'D IT' }] });
        expect(list.list?.map((r) => r.title)).toEqual(['Found it']);
        await stop(api);
      } finally {
        await admin.destroy();
        await instances.db.drop();
        const cluster = knex({ client: 'pg', connection: instances.db.url.replace(`/${name}`, '/postgres'), pool: { min: 0, max: 1 } });
        await cluster.raw(`drop role if exists "${role}"`).finally(() => cluster.destroy());
      }
    });
  }
});
