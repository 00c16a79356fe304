import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

const where = (items: unknown[]) => `where=${encodeURIComponent(JSON.stringify(items))}`;

/** The `like` family ignores case for every letter, not only ASCII, and alike on both databases. */
describe.each(TEST_DBS)('case-insensitive text conditions beyond ASCII on %s', (kind) => {
  let t: TestApi;
  const names = ['Ärmel ÉCLAIR', 'ÜBERGRÖSSE straße', 'Ωmega σίγμα', 'plain ascii'];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    for (const name of names) await t.post('/api/Product', { name }).expect(200);
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('contains, startsWith, endsWith, like and notContains fold the case of any letter (generation %s)', async (_g, base) => {
    const found = async (type: string, value: string) =>
      ((await t.get(`${base}/Product?select=name&sortBy=name&${where([{ type, attribute: 'name', value }])}`).expect(200)).body.list as { name: string }[]).map((r) => r.name);
    expect(await found('contains', 'ärmel')).toEqual(['Ärmel ÉCLAIR']);
    expect(await found('contains', 'éclair')).toEqual(['Ärmel ÉCLAIR']);
    expect(await found('startsWith', 'übergrösse')).toEqual(['ÜBERGRÖSSE straße']);
    expect(await found('endsWith', 'ΣΊΓΜΑ')).toEqual(['Ωmega σίγμα']);
    expect(await found('like', '%öss%')).toEqual(['ÜBERGRÖSSE straße']);
    expect(await found('notContains', 'ÄRMEL')).toEqual(names.filter((n) => n !== 'Ärmel ÉCLAIR').sort());
  });
});

/**
 * Both databases lower each letter on its own: `İ` is `i`, and a final `Σ` is `σ` (JavaScript's
 * toLowerCase() made them `i̇` and `ς`, and SQLite answered otherwise than PostgreSQL).
 */
describe.each(TEST_DBS)('letters whose lower case depends on their neighbours on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    for (const name of ['ΟΔΟΣ', 'İstanbul', 'plain']) await t.post('/api/Product', { name }).expect(200);
  });
  afterAll(() => t.close());

  it.each(GENERATIONS)('match as PostgreSQL lowers them (generation %s)', async (_g, base) => {
    const found = async (type: string, value: string) =>
      ((await t.get(`${base}/Product?select=name&sortBy=name&${where([{ type, attribute: 'name', value }])}`).expect(200)).body.list as { name: string }[]).map((r) => r.name);
    expect(await found('contains', 'σ')).toEqual(['ΟΔΟΣ']);
    expect(await found('endsWith', 'Σ')).toEqual(['ΟΔΟΣ']);
    expect(await found('contains', 'ς')).toEqual([]);
    expect(await found('startsWith', 'istan')).toEqual(['İstanbul']);
    expect(await found('contains', 'İ')).toEqual(['plain', 'İstanbul']);
    expect(await found('notContains', 'ς')).toEqual(['plain', 'İstanbul', 'ΟΔΟΣ']);
  });
});
