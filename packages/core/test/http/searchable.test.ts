import { defineEntity } from '@entity-records/core';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { whereNames } from './list-helpers';

// The same text in a searchable field and in one without the option, of both text types.
const Note = defineEntity({
  name: 'Note',
  fields: {
    name: { type: 'varchar', required: true },
    title: { type: 'varchar', searchable: true },
    titlePlain: { type: 'varchar' },
    body: { type: 'text', searchable: true },
    bodyPlain: { type: 'text' },
  },
});

const TEXTS: [name: string, text: string | null][] = [
  ['n1', 'Discount 50% off'],
  ['n2', 'Discount 50 units'],
  ['n3', '50x zoom'],
  ['n4', 'Plain_text here'],
  ['n5', 'back\\slash\\'],
  ['n6', 'Ärger über Straße'],
  ['n7', null],
];

type Expected = string[] | { sqlite: string[]; postgres: string[] };
// [operator, value, names found]
const CASES: [string, string, Expected][] = [
  ['contains', 'discount', ['n1', 'n2']],
  ['contains', 'DISCOUNT 50', ['n1', 'n2']],
  ['contains', '50%', ['n1']],
  ['contains', '%', ['n1']],
  ['contains', '_', ['n4']],
  ['contains', 'iscoun_', []],
  ['contains', 'slash\\', ['n5']],
  ['contains', '\\', ['n5']],
  ['contains', 'zoom 1', []],
  ['contains', 'über', ['n6']],
  // Both databases fold the case of every letter (as without the option).
  ['contains', 'ÜBER', ['n6']],
  ['notContains', 'discount', ['n3', 'n4', 'n5', 'n6', 'n7']],
  ['startsWith', 'discount 50%', ['n1']],
  ['startsWith', 'di', ['n1', 'n2']],
  ['startsWith', '%', []],
  ['startsWith', '_', []],
  ['endsWith', 'HERE', ['n4']],
  ['endsWith', '\\', ['n5']],
  ['endsWith', '%', []],
  ['like', '%50\\%%', ['n1']],
  ['like', 'plain_text%', ['n4']],
  ['like', 'PLAIN\\_TEXT%', ['n4']],
  ['like', '%\\', ['n5']],
  ['like', 'discount%', ['n1', 'n2']],
  ['notLike', '%ZOOM', ['n1', 'n2', 'n4', 'n5', 'n6', 'n7']],
];

describe.each(TEST_DBS)('filters on searchable fields on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Note] });
    for (const [name, text] of TEXTS) await t.post('/api/Note', { name, title: text, titlePlain: text, body: text, bodyPlain: text }).expect(200);
  });
  afterAll(() => t.close());

  it.each(CASES)('%s %j answers alike with and without the option', async (type, value, expected) => {
    const want = Array.isArray(expected) ? expected : expected[kind];
    for (const attribute of ['title', 'titlePlain', 'body', 'bodyPlain']) {
      expect({ attribute, names: await whereNames(t, '/api', 'Note', [{ type, attribute, value }]) }).toEqual({ attribute, names: want });
    }
  });

  it('counts and sorts a filtered page as before', async () => {
    const path = '/api/Note?select=name&sortBy=title&maxSize=1&where[0][type]=contains&where[0][attribute]=title&where[0][value]=5';
    expect((await t.get(path).expect(200)).body).toEqual({ total: 3, list: [{ id: expect.any(String), name: 'n3' }] });
    expect((await t.get(`${path}&offset=3`).expect(200)).body).toEqual({ total: 3, list: [] });
  });

  if (kind === 'postgres') {
    it('is answered through the trigram index where the planner finds it cheaper', async () => {
      const { knex } = t.api.database;
      const seen: { sql: string; bindings: unknown[] }[] = [];
      const listener = (q: { sql: string; bindings?: unknown[] }) => void seen.push({ sql: q.sql, bindings: q.bindings ?? [] });
      knex.on('query', listener);
      await t.get('/api/Note?select=name&where[0][type]=contains&where[0][attribute]=title&where[0][value]=Discount').expect(200);
      knex.off('query', listener);
      const count = seen.find((q) => /^select count/.test(q.sql));
      expect(count?.sql).toMatch(/lower\("note"\."title"\) like lower\(\$\d\)/);
      // A few rows are cheaper to read than an index: tell the planner to avoid reading them all.
      const plan = await knex.transaction(async (trx) => {
        await trx.raw('set local enable_seqscan = off');
        const rows = (await trx.raw(`explain ${(count?.sql ?? '').replace(/\$\d+/g, '?')}`, count?.bindings as never)).rows as { 'QUERY PLAN': string }[];
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
      expect(plan).toMatch(/Bitmap Index Scan on search_note_title/);
    });
  }
});
