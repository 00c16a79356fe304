import { ApiError, definePlugin, type PresentKind } from '@entity-records/core';
import request from 'supertest';
import { countQueries, GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

declare module '@entity-records/core' {
  interface RequestContextVariables {
    probe?: string;
  }
}

interface Call {
  kind: PresentKind;
  entity: string;
  count: number;
  link?: string;
  language?: string;
  probe?: string;
}

/**
 * Records what the present stage sees; reads `price` along with every Product response. A Brand
 * list hook applies only to requests with `X-Probe`, and records what it is asked (`gated`).
 */
function probePlugin(calls: Call[], gated: string[]) {
  return definePlugin({
    name: 'probe',
    setup(api) {
      api.onRequest(({ header, ctx }) => {
        const value = header('x-probe');
        if (value === 'bad') throw new ApiError('CORE_INVALID_QUERY', 'x-probe must not be bad');
        if (value) ctx.variables.probe = value;
      });
      api.onPresent('*', {
        present: ({ kind, model, records, link, ctx }) =>
          void calls.push({ kind, entity: model.name, count: records.length, link: link?.field.name, language: ctx.language, probe: ctx.variables.probe }),
      });
      api.onPresent('Product', {
        kinds: ['list', 'read', 'linked'],
        load: () => ['price', 'createdByActor'],
        present({ records }) {
          for (const r of records) r.priceSeen = r.price ?? 'none';
        },
      });
      api.onPresent('Brand', {
        kinds: ['list'],
        applies: ({ ctx }) => ctx.variables.probe !== undefined,
        load: ({ ctx }) => (gated.push(`load ${ctx.variables.probe}`), []),
        present: ({ ctx }) => void gated.push(`present ${ctx.variables.probe}`),
      });
      api.addMetaCategory('plain', ({ records }) => records.map((r) => (r.name === 'B' ? 'b' : undefined)));
      api.addMetaCategory('priced', {
        kinds: ['list', 'read', 'update'],
        load: ({ model }) => (model.field.has('price') ? ['price'] : []),
        provide: ({ records }) => records.map((r) => (typeof r.price === 'number' ? r.price > 10 : undefined)),
      });
    },
  });
}

describe.each(TEST_DBS)('the present stage on %s', (kind) => {
  let t: TestApi;
  const calls: Call[] = [];
  const gated: string[] = [];
  let products: { id: string }[];
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities, plugins: [probePlugin(calls, gated)], languages: ['en_US', 'de_DE'], auth: { tokenCacheSeconds: 3600 } });
    const category = (await t.post('/api/Category', { name: 'Chairs', code: 'chairs' }).expect(200)).body;
    products = [];
    for (const [name, price] of [['A', 5], ['B', 20], ['C', null]] as const) {
      products.push((await t.post('/api/Product', { name, price, categoriesIds: [category.id] }).expect(200)).body);
    }
  });
  afterAll(() => t.close());
  beforeEach(() => void (calls.splice(0), gated.splice(0)));

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('runs once per page with the kind of response, and reads fields the response does not select', async () => {
      const list = await t.get(`${base}/Product?select=name&sortBy=name`).expect(200);
      expect(calls).toEqual([{ kind: 'list', entity: 'Product', count: 3 }]);
      expect(list.body.list).toEqual([
        { id: products[0].id, name: 'A', priceSeen: 5 },
        { id: products[1].id, name: 'B', priceSeen: 20 },
        { id: products[2].id, name: 'C', priceSeen: 'none' },
      ]);
      const one = await t.get(`${base}/Product/${products[1].id}?select=name`).expect(200);
      expect(one.body).toEqual({ id: products[1].id, name: 'B', priceSeen: 20 });
      expect(calls[1]).toEqual({ kind: 'read', entity: 'Product', count: 1 });
    });

    it('passes the link of linked-record responses', async () => {
      const brand = (await t.post(`${base}/Brand`, { name: `Linked ${base}` }).expect(200)).body;
      await t.patch(`/api/Product/${products[0].id}`, { brandId: brand.id }).expect(200);
      calls.splice(0);
      const paths = [`${base}/entityRelation?entityName=Brand&id=${brand.id}&link=products`];
      if (base === '/api/v1') paths.push(`${base}/Brand/${brand.id}/products`);
      for (const path of paths) {
        const res = await t.get(path).expect(200);
        expect(res.body.list).toEqual([expect.objectContaining({ id: products[0].id, priceSeen: 5 })]);
      }
      expect(calls).toEqual(paths.map(() => ({ kind: 'linked', entity: 'Product', count: 1, link: 'products' })));
    });

    it('shapes create and update answers too, without the fields read only for the hooks', async () => {
      const created = await t.post(`${base}/Brand`, { name: `Shaped ${base}` }).expect(200);
      const updated = await t.put(`${base}/Brand/${created.body.id}`, { code: 'S' }).expect(200);
      expect(calls.map((c) => c.kind)).toEqual(['create', 'update']);
      for (const body of [created.body, updated.body]) expect(body.createdByActorId).toBeUndefined();
      const product = await t.patch(`${base}/Product/${products[1].id}`, { quantity: 2 }).set('With-Meta', '1').expect(200);
      expect(product.body).toMatchObject({ price: 20, _meta: { priced: true } });
      expect(product.body.priceSeen).toBeUndefined();
    });

    it('adds _meta only with With-Meta true or 1, leaving out categories without a value', async () => {
      const plain = await t.get(`${base}/Product?select=name&sortBy=name`).expect(200);
      expect(plain.body.list.every((r: Record<string, unknown>) => !('_meta' in r))).toBe(true);
      for (const value of ['true', '1', 'TRUE']) {
        const res = await t.get(`${base}/Product?select=name&sortBy=name`).set('With-Meta', value).expect(200);
        expect(res.body.list.map((r: Record<string, unknown>) => r._meta)).toEqual([{ priced: false }, { plain: 'b', priced: true }, {}]);
        expect(Object.keys(res.body.list[0])).toEqual(['id', 'name', 'priceSeen', '_meta']);
      }
      const no = await t.get(`${base}/Product/${products[0].id}`).set('With-Meta', 'false').expect(200);
      expect(no.body._meta).toBeUndefined();
      const categories = await t.get(`${base}/Category`).set('With-Meta', 'true').expect(200);
      expect(categories.body.list[0]._meta).toEqual({});
    });

    it('asks a hook nothing on the answers it does not apply to', async () => {
      await t.get(`${base}/Brand`).expect(200);
      expect(gated).toEqual([]);
      await t.get(`${base}/Brand`).set('X-Probe', 'on').expect(200);
      expect(gated).toEqual(['load on', 'present on']);
    });

    it('runs onRequest hooks before the route, which may refuse the request', async () => {
      await t.get(`${base}/Brand`).set('X-Probe', 'hello').expect(200);
      expect(calls.at(-1)).toMatchObject({ kind: 'list', probe: 'hello' });
      const bad = await t.get(`${base}/Brand`).set('X-Probe', 'bad').expect(400);
      expect(bad.body.error).toMatchObject({ code: 'CORE_INVALID_QUERY', message: 'x-probe must not be bad' });
      await t.get(`${base}/Nope`).set('X-Probe', 'bad').expect(400);
    });

    it('puts the language asked for into the context; main is the main language; an unknown one is 400', async () => {
      await t.get(`${base}/Brand`).set('language', 'de_DE').expect(200);
      await t.get(`${base}/Brand`).set('language', 'main').expect(200);
      await t.get(`${base}/Brand`).expect(200);
      expect(calls.map((c) => c.language)).toEqual(['de_DE', 'en_US', undefined]);
      for (const value of ['fr_FR', 'de_de', 'xx']) {
        const res = await t.get(`${base}/Product/${products[0].id}`).set('language', value).expect(400);
        expect(res.body.error).toMatchObject({ code: 'CORE_INVALID_LANGUAGE', details: { language: value, languages: ['en_US', 'de_DE'] } });
        expect(res.headers['x-status-reason']).toMatch(/Unknown language/);
      }
    });
  });

  it('reads the fields the hooks need in the same query as the page', async () => {
    const count = async (path: string) => {
      await t.get(path).expect(200);
      return countQueries(t, () => t.get(path).set('With-Meta', 'true').expect(200));
    };
    // count + rows + categories; price and the actor are read with the rows
    expect(await count('/api/Product?select=name,categories&maxSize=2')).toBe(3);
    expect(await count('/api/Product?select=name,categories&maxSize=50')).toBe(3);
  });

  it('does not read the language header on an instance without languages', async () => {
    const bare = await startTestApi(kind, { entities: testEntities });
    try {
      await request(bare.server).get('/api/Brand').set('Authorization-Token', bare.token).set('language', 'xx_YY').expect(200);
    } finally {
      await bare.close();
    }
  });
});
