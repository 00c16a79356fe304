import { GENERATIONS, recordQueries, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { changeReaders, type ChangeReaders } from '../../../../test/support/change-readers';
import { createAttribute, createWeight, FLAT, startAttributeApi, unique } from '../attributes/support';

jest.setTimeout(60_000);

/**
 * A permanent delete changes the attribute values that named the deleted record (link and
 * multiple-link attributes) and, of an attribute, the values of it every record held. Each live
 * record whose values changed gets a new version and one change (CONTRACT §16), which its stream,
 * server-sent events (replay too) and its ETag show.
 */
describe.each(TEST_DBS)('attribute values a permanent delete changes on %s', (kind) => {
  let t: TestApi;
  let readers: ChangeReaders;

  beforeAll(async () => {
    // Tokens stay cached (SQLite's cache lasts half a second): a reload would fall into a statement count below.
    t = await startAttributeApi(kind, { auth: { tokenCacheSeconds: 3600 } });
    readers = await changeReaders(t);
  });
  afterEach(() => readers.closeClients());
  afterAll(async () => {
    await readers.close();
    await t.close();
  });

  const brand = async () => (await t.post('/api/Brand', { name: unique('Purged brand ') }).expect(200)).body.id as string;
  const product = async (body: Record<string, unknown> = {}) => (await t.post('/api/Product', { name: unique('Purged product '), ...body }).set(FLAT).expect(200)).body.id as string;
  const etagOf = async (id: string) => (await t.get(`/api/Product/${id}`).expect(200)).headers.etag as string;
  const purge = (base: string, entity: string, id: string) => t.del(`${base}/${entity}/${id}`).set('permanently', 'true').expect(200);
  /** Reads with the old ETag see a new version; a write sent with it is 412. */
  const expectMoved = async (id: string, etag: string) => {
    expect(await etagOf(id)).not.toBe(etag);
    await t.patch(`/api/Product/${id}`).set('If-Match', etag).send({ price: 1 }).expect(412);
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('purging a brand clears the link attribute values naming it: each product moves its version and logs one Unrelate', async () => {
      const [maker, sellers] = [unique('maker'), unique('sellers')];
      await createAttribute(t, { code: maker, type: 'link', linkEntity: 'Brand' });
      await createAttribute(t, { code: sellers, type: 'linkMultiple', linkEntity: 'Brand' });
      const [b, kept] = [await brand(), await brand()];
      const single = await product({ [`${maker}Id`]: b });
      const both = await product({ brandId: b, [`${maker}Id`]: b, [`${sellers}Ids`]: [b, kept] });
      const only = await product({ [`${sellers}Ids`]: [b] });
      const binned = await product({ [`${maker}Id`]: b });
      await t.del(`/api/Product/${binned}`).expect(200);
      const untouched = await product({ [`${maker}Id`]: kept });
      const etags = new Map(await Promise.all([single, both, only, untouched].map(async (p) => [p, await etagOf(p)] as const)));
      const seq = await readers.seqOf(base, { id: only, count: 1 });
      await purge(base, 'Brand', b);

      expect((await t.get(`/api/Product/${single}`).set(FLAT).expect(200)).body).toMatchObject({ [`${maker}Id`]: null, [`${maker}Name`]: null });
      expect((await t.get(`/api/Product/${both}`).set(FLAT).expect(200)).body).toMatchObject({ brandId: null, [`${maker}Id`]: null, [`${sellers}Ids`]: [kept] });
      for (const p of [single, both, only]) await expectMoved(p, etags.get(p) as string);
      expect(await etagOf(untouched)).toBe(etags.get(untouched));

      expect((await readers.changesOf(base, 'Product', single)).slice(1)).toEqual([{ action: 'Unrelate', diff: { [`${maker}Id`]: { was: b, became: null } } }]);
      // A plain link and attribute values lost at once: one change with each.
      const ofBoth = (await readers.changesOf(base, 'Product', both)).slice(1);
      expect(ofBoth).toEqual([
        {
          action: 'Unrelate',
          diff: { brandId: { was: b, became: null }, [`${maker}Id`]: { was: b, became: null }, [`${sellers}Ids`]: { was: expect.any(Array), became: [kept] } },
        },
      ]);
      expect([...(ofBoth[0].diff[`${sellers}Ids`].was as string[])].sort()).toEqual([b, kept].sort());
      // An emptied multiple link is no value, as its write logs it.
      expect((await readers.changesOf(base, 'Product', only)).slice(1)).toEqual([{ action: 'Unrelate', diff: { [`${sellers}Ids`]: { was: [b], became: null } } }]);
      expect((await readers.changesOf(base, 'Product', untouched)).map((c) => c.action)).toEqual(['Create']);

      const events = await readers.replayed(base, { seq, ids: [single, both, only], count: 3 });
      expect(events.map((e) => [e.recordId, e.action]).sort()).toEqual([single, both, only].sort().map((p) => [p, 'Unrelate']));
      expect(events.find((e) => e.recordId === single)?.diff).toEqual({ [`${maker}Id`]: { was: b, became: null } });

      // A record in the bin loses the value too, with neither a change nor a new version.
      await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [binned] }).expect(200);
      expect((await t.get(`/api/Product/${binned}`).set(FLAT).expect(200)).body[`${maker}Id`]).toBeNull();
      expect((await readers.changesOf(base, 'Product', binned)).map((c) => c.action)).toEqual(['Create', 'Delete', 'Restore']);
    });

    it('purging an attribute removes its values: each product that held one moves its version and logs one Update', async () => {
      const [title, weight, size] = [unique('title'), unique('weight'), unique('size')];
      const { measureId, g } = await createWeight(t, unique('w'));
      const ti = await createAttribute(t, { code: title, type: 'varchar', isMultilang: true });
      const w = await createAttribute(t, { code: weight, type: 'float', measureId });
      const s = await createAttribute(t, { code: size, type: 'varchar' });
      const heavy = await product({ [weight]: 3, [`${weight}UnitId`]: g, [size]: 'M' });
      const titled = await product({ [title]: 'Oak', [`${title}DeDE`]: 'Eiche', [size]: 'L' });
      const empty = await product();
      const binned = await product({ [size]: 'S' });
      await t.del(`/api/Product/${binned}`).expect(200);
      await t.post(`${base}/Product/${empty}/addAttributes`, { attributeIds: [w] }).expect(200);
      const [etagHeavy, etagTitled, etagEmpty] = [await etagOf(heavy), await etagOf(titled), await etagOf(empty)];
      const seq = await readers.seqOf(base, { id: empty, count: 2 });

      await purge(base, 'Attribute', w);
      expect((await t.get(`/api/Product/${heavy}`).set(FLAT).expect(200)).body).not.toHaveProperty(weight);
      await expectMoved(heavy, etagHeavy);
      await expectMoved(empty, etagEmpty);
      expect(await etagOf(titled)).toBe(etagTitled);
      expect((await readers.changesOf(base, 'Product', heavy)).slice(1)).toEqual([{ action: 'Update', diff: { [weight]: { was: 3, became: null }, [`${weight}UnitId`]: { was: g, became: null } } }]);
      // An attribute on a record without a value was there, empty, as putting it on logs it.
      expect((await readers.changesOf(base, 'Product', empty)).slice(-1)).toEqual([{ action: 'Update', diff: { [weight]: { was: null, became: null } } }]);
      const events = await readers.replayed(base, { seq, ids: [heavy, empty], count: 2 });
      expect(events.map((e) => [e.recordId, e.action]).sort()).toEqual([heavy, empty].sort().map((p) => [p, 'Update']));

      // Soft-deleted, an attribute hides its values (as a soft-deleted link target drops out of
      // lists) without a change; purged, it takes them away, each record logging what it held.
      await t.del(`/api/Attribute/${ti}`).expect(200);
      expect((await t.get(`/api/Product/${titled}`).set(FLAT).expect(200)).body).not.toHaveProperty(title);
      expect(await etagOf(titled)).toBe(etagTitled);
      await purge(base, 'Attribute', ti);
      await expectMoved(titled, etagTitled);
      expect((await readers.changesOf(base, 'Product', titled)).slice(1)).toEqual([{ action: 'Update', diff: { [title]: { was: 'Oak', became: null }, [`${title}DeDE`]: { was: 'Eiche', became: null } } }]);
      expect((await t.get(`/api/Product/${titled}`).set(FLAT).expect(200)).body[size]).toBe('L');

      // A record in the bin loses the value too, with neither a change nor a new version.
      await purge(base, 'Attribute', s);
      expect((await readers.changesOf(base, 'Product', titled)).at(-1)).toEqual({ action: 'Update', diff: { [size]: { was: 'L', became: null } } });
      await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [binned] }).expect(200);
      expect((await t.get(`/api/Product/${binned}`).set(FLAT).expect(200)).body).not.toHaveProperty(size);
      expect((await readers.changesOf(base, 'Product', binned)).map((c) => c.action)).toEqual(['Create', 'Delete', 'Restore']);
    });

    it('purging a unit clears it from the values that carried it: each product moves its version and logs one Unrelate', async () => {
      const weight = unique('weight');
      const { measureId, kg, g } = await createWeight(t, unique('w'));
      await createAttribute(t, { code: weight, type: 'float', measureId });
      const grams = await product({ [weight]: 3, [`${weight}UnitId`]: g });
      const kilos = await product({ [weight]: 2, [`${weight}UnitId`]: kg });
      const binned = await product({ [weight]: 5, [`${weight}UnitId`]: g });
      await t.del(`/api/Product/${binned}`).expect(200);
      const [etagGrams, etagKilos] = [await etagOf(grams), await etagOf(kilos)];
      const seq = await readers.seqOf(base, { id: grams, count: 1 });

      await purge(base, 'Unit', g);
      // The value keeps its number; no unit names the removed one.
      expect((await t.get(`/api/Product/${grams}`).set(FLAT).expect(200)).body).toMatchObject({ [weight]: 3, [`${weight}UnitId`]: null, [`${weight}UnitName`]: null });
      await expectMoved(grams, etagGrams);
      expect(await etagOf(kilos)).toBe(etagKilos);
      expect((await readers.changesOf(base, 'Product', grams)).slice(1)).toEqual([{ action: 'Unrelate', diff: { [`${weight}UnitId`]: { was: g, became: null } } }]);
      const events = await readers.replayed(base, { seq, ids: [grams], count: 1 });
      expect(events.map((e) => [e.recordId, e.action, e.diff])).toEqual([[grams, 'Unrelate', { [`${weight}UnitId`]: { was: g, became: null } }]]);

      // A record in the bin loses the unit too, with neither a change nor a new version.
      await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [binned] }).expect(200);
      expect((await t.get(`/api/Product/${binned}`).set(FLAT).expect(200)).body[`${weight}UnitId`]).toBeNull();
      expect((await readers.changesOf(base, 'Product', binned)).map((c) => c.action)).toEqual(['Create', 'Delete', 'Restore']);
    });
  });

  it("a purge of a brand while its products' link values are written keeps each product at one version per change, without a failure", async () => {
    const maker = unique('maker');
    await createAttribute(t, { code: maker, type: 'link', linkEntity: 'Brand' });
    const [b, kept] = [await brand(), await brand()];
    const products = [];
    for (let i = 0; i < 6; i++) products.push(await product({ [`${maker}Id`]: b, brandId: i % 2 ? b : kept }));
    const sent = [
      t.del(`/api/Brand/${b}`).set('permanently', 'true'),
      ...products.map((p, i) => t.patch(`/api/Product/${p}`).set(FLAT).send(i % 3 ? { [`${maker}Id`]: i % 2 ? kept : b } : { price: i })),
    ];
    const answers = await Promise.all(sent.map((r) => r.then((x) => x)));
    // A write of a link to the brand purged meanwhile is refused as a link to no record; nothing fails.
    for (const a of answers) expect([[200], [400, 'CORE_INVALID_LINK']]).toContainEqual(a.status === 200 ? [200] : [a.status, a.body.error?.code]);
    for (const p of products) {
      const read = await t.get(`/api/Product/${p}`).set(FLAT).expect(200);
      expect(read.body[`${maker}Id`]).not.toBe(b);
      const { total } = (await t.get(`/api/v1/Product/${p}/stream`).expect(200)).body as { total: number };
      expect(Number(JSON.parse(read.headers.etag as string))).toBe(total);
    }
  });

  it('a purge of an attribute while its values are written keeps each product at one version per change, without a failure', async () => {
    const [pieces, size] = [unique('pieces'), unique('size')];
    const a = await createAttribute(t, { code: pieces, type: 'int' });
    await createAttribute(t, { code: size, type: 'varchar' });
    const products = [];
    for (let i = 0; i < 6; i++) products.push(await product({ [pieces]: i }));
    const sent = [t.del(`/api/Attribute/${a}`).set('permanently', 'true'), ...products.map((p, i) => t.patch(`/api/Product/${p}`).set(FLAT).send(i % 2 ? { [pieces]: 10 + i } : { [size]: `S${i}` }))];
    const answers = await Promise.all(sent.map((r) => r.then((x) => x)));
    // A write of a value of the attribute purged meanwhile is refused as an unknown field; nothing fails.
    for (const r of answers) expect([[200], [400, 'CORE_UNKNOWN_FIELD']]).toContainEqual(r.status === 200 ? [200] : [r.status, r.body.error?.code]);
    for (const p of products) {
      const read = await t.get(`/api/Product/${p}`).set(FLAT).expect(200);
      expect(read.body).not.toHaveProperty(pieces);
      const { total } = (await t.get(`/api/v1/Product/${p}/stream`).expect(200)).body as { total: number };
      expect(Number(JSON.parse(read.headers.etag as string))).toBe(total);
    }
  });

  it('costs as many statements for an attribute (or a linked brand) of 40 products as for one of 4', async () => {
    const cost = async (count: number) => {
      const code = unique('pieces');
      const a = await createAttribute(t, { code, type: 'int' });
      const maker = unique('maker');
      await createAttribute(t, { code: maker, type: 'link', linkEntity: 'Brand' });
      const sellers = unique('sellers');
      await createAttribute(t, { code: sellers, type: 'linkMultiple', linkEntity: 'Brand' });
      const [b, kept] = [await brand(), await brand()];
      for (let i = 0; i < count; i++) await product({ [code]: i, [`${maker}Id`]: b, [`${sellers}Ids`]: [kept, b] });
      // recordQueries leaves out the change feed's reads, which follow a commit on their own time.
      const countQueries = async (send: () => PromiseLike<unknown>) => (await recordQueries(t, send)).length;
      return [await countQueries(() => purge('/api', 'Attribute', a)), await countQueries(() => purge('/api', 'Brand', b))];
    };
    await cost(1);
    expect(await cost(40)).toEqual(await cost(4));
  });
});
