import { randomUUID } from 'node:crypto';
import { GENERATIONS, recordQueries, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { finishedJob } from '../../../../test/support/jobs';
import { UPSERT_PATHS, type UpsertResult } from './support';

/**
 * A batch that follows one that found no stored record is guessed new: its keys are not looked up,
 * the unique indexes answer instead. Whatever the guess, every item is answered and stored as it
 * is after a lookup: an item the guess judged wrongly (a stored key, an update's partial payload,
 * an id in the bin) makes the batch be decided again, after a lookup, and only that try is stored
 * and logged.
 */
describe.each(TEST_DBS)('upsert batches guessed new on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  const product = (payload: Record<string, unknown>) => ({ entity: 'Product', payload });
  /** The next batch of Product is guessed new: this one finds no stored record. */
  const guessNext = () => t.post('/api/upsert', [product({ name: 'new', sku: `guess-${randomUUID()}` })]).expect(200);
  /** The next batch of Product looks its keys up: this one finds a stored record. */
  const lookUpNext = async () => {
    const sku = `look-${randomUUID()}`;
    await t.post('/api/Product', { name: 'stored', sku }).expect(200);
    await t.post('/api/upsert', [product({ sku, price: 1 })]).expect(200);
  };
  /** What an answer says of each item, without what differs between two runs (ids and times). */
  const shape = (results: UpsertResult[], tag: string) =>
    results.map((r) => ({ status: r.status, stored: r.stored, message: r.message?.replaceAll(tag, '<tag>'), sku: (r.entity?.sku as string | undefined)?.replace(tag, '<tag>'), name: r.entity?.name, price: r.entity?.price }));
  const changesOf = async (id: string) => ((await t.get(`/api/v1/Product/${id}/stream`).expect(200)).body.list as { action: string; diff: Record<string, unknown> }[]).map((c) => [c.action, Object.keys(c.diff).sort()]);
  /** A select of products by sku (quoted as either database quotes names). */
  const looksUpSkus = (sql: string) => /^select\b/i.test(sql) && /\bfrom ["`]product["`]/.test(sql) && /["`]sku["`]/.test(sql);
  const bySku = async (sku: string) => (await t.get(`/api/Product?where[0][type]=equals&where[0][attribute]=sku&where[0][value]=${encodeURIComponent(sku)}`).expect(200)).body;

  /** Batches whose items a guess judges wrongly, with the records they find stored. */
  const scenarios: [string, (tag: string) => Promise<Record<string, unknown>[]>][] = [
    [
      'new records around a stored key',
      async (tag) => {
        await t.post('/api/Product', { name: 'Stored', sku: `${tag}-s`, price: 1 }).expect(200);
        return [product({ name: 'N1', sku: `${tag}-n1` }), product({ sku: `${tag}-s`, price: 2 }), product({ name: 'N2', sku: `${tag}-n2` })];
      },
    ],
    ['a new record, then one without its required name', async (tag) => [product({ name: 'N', sku: `${tag}-n` }), product({ sku: `${tag}-x` })]],
    [
      'an id of a record in the bin',
      async (tag) => {
        await t.post('/api/Product', { id: `${tag}-binned`, name: 'Binned', sku: `${tag}-b0` }).expect(200);
        await t.del(`/api/Product/${tag}-binned`).expect(200);
        return [product({ id: `${tag}-binned`, name: 'Back', sku: `${tag}-b` }), product({ name: 'N', sku: `${tag}-n` })];
      },
    ],
    ['one key twice', async (tag) => [product({ name: 'First', sku: `${tag}-d` }), product({ name: 'Second', sku: `${tag}-d` })]],
  ];

  describe.each(UPSERT_PATHS)('generation %s: %s', (gen, path) => {
    it.each(scenarios)('answer %s as after a lookup, storing and logging each record once', async (_, batch) => {
      const tags = { read: `rd${gen}${randomUUID().slice(0, 8)}`, guess: `gs${gen}${randomUUID().slice(0, 8)}` };
      const readItems = await batch(tags.read);
      await lookUpNext();
      const afterLookup = (await t.post(path, readItems).expect(200)).body as UpsertResult[];
      const guessItems = await batch(tags.guess);
      await guessNext();
      const guessed = (await t.post(path, guessItems).expect(200)).body as UpsertResult[];
      expect(shape(guessed, tags.guess)).toEqual(shape(afterLookup, tags.read));
      for (const [i, result] of guessed.entries()) {
        if (!result.stored) continue;
        const stored = await bySku(result.entity?.sku as string);
        expect(stored.total).toBe(1);
        expect(stored.list[0].id).toBe(result.entity?.id);
        const read = afterLookup[i].entity as Record<string, unknown>;
        expect(await changesOf(result.entity?.id as string)).toEqual(await changesOf(read.id as string));
      }
    });
  });

  it('store a batch guessed new without looking its keys up, each record logged once', async () => {
    await guessNext();
    const tag = randomUUID().slice(0, 8);
    const items = Array.from({ length: 5 }, (_, i) => product({ name: `G${i}`, sku: `${tag}-${i}` }));
    let results: UpsertResult[] = [];
    const sql = await recordQueries(t, async () => {
      results = (await t.post('/api/upsert', items).expect(200)).body;
    });
    expect(results.map((r) => r.status)).toEqual(['Created', 'Created', 'Created', 'Created', 'Created']);
    expect(sql.filter(looksUpSkus)).toEqual([]);
    for (const r of results) expect(await changesOf(r.entity?.id as string)).toEqual([['Create', ['isActive', 'name', 'sku']]]);
    // A batch that meets a stored key after it is decided again, after a lookup of its keys.
    const again = await recordQueries(t, async () => {
      results = (await t.post('/api/upsert', [product({ name: 'G9', sku: `${tag}-9` }), product({ sku: `${tag}-0`, price: 3 })]).expect(200)).body;
    });
    expect(results.map((r) => r.status)).toEqual(['Created', 'Updated']);
    expect(again.filter(looksUpSkus)).not.toEqual([]);
    expect((await bySku(`${tag}-9`)).total).toBe(1);
  });

  it.each(GENERATIONS)('answer an upsertAsync job guessed new as after a lookup (generation %s)', async (_gen, base) => {
    const tag = randomUUID().slice(0, 8);
    await t.post('/api/Product', { name: 'Stored', sku: `${tag}-s`, price: 1 }).expect(200);
    await guessNext();
    const { jobId } = (await t.post(`${base}/upsertAsync`, [product({ name: 'N', sku: `${tag}-n` }), product({ sku: `${tag}-s`, price: 2 })]).expect(200)).body;
    const job = await finishedJob(t, { base, id: jobId });
    expect(job.status).toBe('Success');
    const results = job.result as UpsertResult[];
    expect(results.map((r) => r.status)).toEqual(['Created', 'Updated']);
    expect((await bySku(`${tag}-s`)).list).toEqual([expect.objectContaining({ price: 2 })]);
    expect(await changesOf(results[0].entity?.id as string)).toEqual([['Create', ['isActive', 'name', 'sku']]]);
    expect(await changesOf(results[1].entity?.id as string)).toEqual([
      ['Update', ['price']],
      ['Create', ['isActive', 'name', 'price', 'sku']],
    ]);
  });
});
