import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, FLAT, ids, startAttributeApi } from './support';

const where = (items: unknown[]) => `where=${encodeURIComponent(JSON.stringify(items))}`;
const cond = (attribute: string, type: string, value?: unknown) => ({ type, attribute, isAttribute: true, ...(value !== undefined && { value }) });

describe.each(TEST_DBS)('filtering and sorting by attributes on %s', (kind) => {
  let t: TestApi;
  let a: Record<string, string>;
  let p: Record<string, string>;
  let brands: string[];
  /** 51 varchar attributes, made by the first test that needs them. */
  let many: Promise<string[]> | undefined;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    brands = [];
    for (const name of ['Acme', 'Globex']) brands.push((await t.post('/api/Brand', { name }).expect(200)).body.id);
    a = {
      weight: await createAttribute(t, { code: 'weight', type: 'float' }),
      pieces: await createAttribute(t, { code: 'pieces', type: 'int' }),
      label: await createAttribute(t, { code: 'label', type: 'varchar' }),
      eco: await createAttribute(t, { code: 'eco', type: 'bool' }),
      made: await createAttribute(t, { code: 'made', type: 'date' }),
      fits: await createAttribute(t, { code: 'fits', type: 'multiEnum', options: ['S', 'M', 'L'] }),
      maker: await createAttribute(t, { code: 'maker', type: 'link', linkEntity: 'Brand' }),
      sellers: await createAttribute(t, { code: 'sellers', type: 'linkMultiple', linkEntity: 'Brand' }),
    };
    p = {};
    const rows: [string, Record<string, unknown>][] = [
      ['heavy', { weight: 10.5, pieces: 3, label: 'Big_box', eco: true, made: '2024-01-10', fits: ['L'], makerId: brands[0], sellersIds: [brands[0], brands[1]] }],
      ['light', { weight: 0.5, pieces: 1, label: 'small 100%', eco: false, made: '2023-05-01', fits: ['S', 'M'], makerId: brands[1], sellersIds: [brands[1]] }],
      ['middle', { weight: 2, pieces: 2, label: 'Medium', made: '2024-06-30', fits: [] }],
      ['none', {}],
    ];
    for (const [name, values] of rows) {
      const id = (await t.post('/api/Product', { name }).expect(200)).body.id;
      if (Object.keys(values).length) await t.patch(`/api/Product/${id}`, values).set(FLAT).expect(200);
      p[name] = id;
    }
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    const find = async (items: unknown[], extra = '') => {
      const res = await t.get(`${base}/Product?sortBy=name&${where(items)}${extra}`);
      expect({ items, status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({ items, status: 200, body: undefined });
      return ids(res.body).map((id) => Object.keys(p).find((k) => p[k] === id));
    };

    it('applies the operators to attribute values, by attribute id or code', async () => {
      expect(await find([cond(a.weight, 'greaterThan', 1)])).toEqual(['heavy', 'middle']);
      expect(await find([cond('weight', 'lessThanOrEquals', '2')])).toEqual(['light', 'middle']);
      expect(await find([cond('weight', 'between', [0.5, 2])])).toEqual(['light', 'middle']);
      expect(await find([cond('pieces', 'equals', 2)])).toEqual(['middle']);
      expect(await find([cond('pieces', 'notEquals', 2)])).toEqual(['heavy', 'light', 'none']);
      expect(await find([cond('pieces', 'in', [1, 3])])).toEqual(['heavy', 'light']);
      expect(await find([cond('pieces', 'notIn', [1])])).toEqual(['heavy', 'middle', 'none']);
      expect(await find([cond('label', 'isNull')])).toEqual(['none']);
      expect(await find([cond('label', 'isNotNull')])).toEqual(['heavy', 'light', 'middle']);
      expect(await find([cond('label', 'startsWith', 'big_')])).toEqual(['heavy']);
      expect(await find([cond('label', 'contains', '100%')])).toEqual(['light']);
      expect(await find([cond('label', 'like', '%e%')])).toEqual(['middle']);
      expect(await find([cond('eco', 'isTrue')])).toEqual(['heavy']);
      expect(await find([cond('eco', 'isFalse')])).toEqual(['light']);
      expect(await find([cond('made', 'greaterThanOrEquals', '2024-01-01')])).toEqual(['heavy', 'middle']);
      expect(await find([cond('fits', 'arrayAnyOf', ['M', 'L'])])).toEqual(['heavy', 'light']);
      expect(await find([cond('fits', 'arrayNoneOf', ['L'])])).toEqual(['light', 'middle', 'none']);
      expect(await find([cond('maker', 'equals', brands[1])])).toEqual(['light']);
      expect(await find([cond('maker', 'linkedWith', [brands[0]])])).toEqual(['heavy']);
      expect(await find([cond('maker', 'isNotLinked')])).toEqual(['middle', 'none']);
      expect(await find([cond('sellers', 'linkedWith', [brands[1]])])).toEqual(['heavy', 'light']);
      expect(await find([cond('sellers', 'notLinkedWith', [brands[0]])])).toEqual(['light', 'middle', 'none']);
      expect(await find([cond('sellers', 'isLinked')])).toEqual(['heavy', 'light']);
    });

    it('counts only live records as linked by a multiple-link attribute, as for link fields; isNull does not apply to it (400)', async () => {
      const gone = (await t.post('/api/Brand', { name: `Gone ${base}` }).expect(200)).body.id as string;
      const id = (await t.post('/api/Product', { name: `linked to gone ${base}` }).expect(200)).body.id as string;
      await t.patch(`/api/Product/${id}`, { sellersIds: [gone], makerId: gone }).set(FLAT).expect(200);
      const named = async (items: unknown[]) => (await find(items)).includes(undefined);
      expect(await named([cond('sellers', 'linkedWith', [gone])])).toBe(true);
      expect(await named([cond('sellers', 'isLinked')])).toBe(true);
      await t.del(`/api/Brand/${gone}`).expect(200);
      try {
        for (const field of ['sellers', 'maker']) {
          expect(await named([cond(field, 'linkedWith', [gone])])).toBe(false);
          expect(await named([cond(field, 'isLinked')])).toBe(false);
          expect(await named([cond(field, 'isNotLinked')])).toBe(true);
          expect(await named([cond(field, 'notLinkedWith', [gone])])).toBe(true);
        }
        // the records linked to live brands are found as before
        expect(await find([cond('sellers', 'linkedWith', [brands[1], gone])])).toEqual(['heavy', 'light']);
        for (const type of ['isNull', 'isNotNull']) {
          const res = await t.get(`${base}/Product?${where([cond('sellers', type)])}`).expect(400);
          expect(res.body.error.code).toBe('CORE_INVALID_QUERY');
        }
      } finally {
        await t.del(`/api/Product/${id}`).expect(200);
      }
    });

    it('combines attribute conditions with fields, groups and paging, and counts in SQL', async () => {
      expect(await find([{ type: 'or', value: [cond('pieces', 'equals', 1), cond('weight', 'greaterThan', 5)] }])).toEqual(['heavy', 'light']);
      // as for fields, `not` keeps a record without a value: it does not meet the comparison
      expect(await find([{ type: 'not', value: [cond('pieces', 'greaterThan', 1)] }])).toEqual(['light', 'none']);
      expect(await find([cond('weight', 'isNotNull'), { type: 'equals', attribute: 'name', value: 'middle' }])).toEqual(['middle']);
      const bracket = await t
        .get(`${base}/Product?where[0][type]=greaterThan&where[0][attribute]=weight&where[0][isAttribute]=true&where[0][value]=1&maxSize=1&sortBy=name`)
        .expect(200);
      expect(bracket.body.total).toBe(2);
      expect(ids(bracket.body)).toEqual([p.heavy]);
    });

    it('sorts by an attribute listed in attributes=, with missing values first', async () => {
      const asc = await t.get(`${base}/Product?attributes=weight&sortBy=weight`).set(FLAT).expect(200);
      expect(ids(asc.body)).toEqual([p.none, p.light, p.middle, p.heavy]);
      expect(asc.body.list.map((r: { weight?: number }) => r.weight)).toEqual([undefined, 0.5, 2, 10.5]);
      const desc = await t.get(`${base}/Product?attributes=${a.label}&sortBy=label&asc=false&maxSize=2&offset=1`).expect(200);
      expect(ids(desc.body)).toEqual([p.middle, p.heavy]);
      // sorting by the id of the attribute works the same
      expect(ids((await t.get(`${base}/Product?attributes=${a.pieces}&sortBy=${a.pieces}`).expect(200)).body)).toEqual([p.none, p.light, p.middle, p.heavy]);
    });

    it('answers 400 for unknown attributes, unlisted or unsortable sort attributes and bad values', async () => {
      const bad = async (query: string) => {
        const res = await t.get(`${base}/Product?${query}`);
        expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'CORE_INVALID_QUERY' });
      };
      await bad(where([cond('nope', 'equals', 1)]));
      await bad(where([cond('name', 'equals', 'x')]));
      await bad(where([{ type: 'or', value: [cond('nope', 'equals', 1)] }]));
      await bad(where([cond("x' or 1=1 --", 'equals', 1)]));
      await bad(where([cond('weight', 'equals', 'heavy')]));
      await bad(where([cond('weight', 'arrayAnyOf', ['x'])]));
      await bad(where([cond('label', 'unknownOp', 'x')]));
      await bad('sortBy=weight');
      await bad('attributes=fits&sortBy=fits');
      await bad('attributes=nope');
      // an entity type without attributes has none to filter by
      const brand = await t.get(`${base}/Brand?${where([cond('weight', 'equals', 1)])}`);
      expect(brand.status).toBe(400);
    });

    it('filters and sorts by at most 50 attributes at once: more is 400 on both databases (SQLite joined at most 64 tables and answered 500), in lists and mass updates', async () => {
      many ??= (async () => {
        const made: string[] = [];
        for (let i = 0; i < 51; i++) made.push(`many${i}`);
        const res = await t.post('/api/upsert', made.map((code) => ({ entity: 'Attribute', payload: { code, name: code, entityType: 'Product', type: 'varchar' } }))).expect(200);
        expect(res.body.map((item: { status: string }) => item.status)).toEqual(made.map(() => 'Created'));
        return made;
      })();
      const codes = await many;
      const isNull = (count: number) => codes.slice(0, count).map((code) => cond(code, 'isNull'));
      const list = (items: unknown[], extra = '') => t.get(`${base}/Product?select=name&maxSize=10${extra}&${where(items)}`);
      expect((await list(isNull(50)).expect(200)).body.total).toBe(4);
      expect((await list([{ type: 'or', value: isNull(49) }], `&attributes=weight&sortBy=weight`).expect(200)).body.total).toBe(4);
      const refusals = [
        await list(isNull(51)),
        await list([{ type: 'or', value: isNull(51) }]),
        await list([{ type: 'not', value: isNull(51) }]),
        await list(isNull(50), '&attributes=weight&sortBy=weight'),
        await t.post(`${base}/entityMassUpdate`, { entityName: 'Product', where: isNull(51), values: { mpn: 'many' } }),
      ];
      for (const res of refusals) {
        expect([res.status, res.body.error?.code, res.body.error?.message]).toEqual([400, 'CORE_INVALID_QUERY', 'where and sortBy must not name more than 50 attributes of Product (51 named)']);
      }
      expect((await t.get(`${base}/Product?select=mpn&${where([cond('many0', 'isNull')])}`).expect(200)).body.list.map((r: { mpn: unknown }) => r.mpn)).toEqual([null, null, null, null]);
    });
  });
});
