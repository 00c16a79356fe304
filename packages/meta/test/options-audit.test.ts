import SwaggerParser from '@apidevtools/swagger-parser';
import meta from '@entity-records/meta';
import multilang from '@entity-records/multilang';
import request from 'supertest';
import { ADMIN, countQueries, GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { clientFor, delegatedToken, userWithRole, type UserClient } from '../../../test/support/users';
import { entities, seedLists, type Option } from './fixtures';

type Rec = Record<string, any> & { id: string };

describe.each(TEST_DBS)('_meta.options and _meta.audit on %s', (kind) => {
  let t: TestApi;
  let o: Record<string, Option>;
  let full: Rec;
  let bare: Rec;
  let brand: Rec;
  let u: UserClient;
  let adminId: string;
  beforeAll(async () => {
    // Queries are counted below: no token or role lookup may fall in between.
    t = await startTestApi(kind, { entities, plugins: [meta], auth: { tokenCacheSeconds: 3600 } });
    o = await seedLists(t);
    brand = (await t.post('/api/Brand', { name: 'Acme' }).expect(200)).body;
    full = (await t.post('/api/Product', { name: 'Full', statusId: o.active.id, tagsIds: [o.sale.id, o.new.id], brandId: brand.id }).expect(200)).body;
    bare = (await t.post('/api/Product', { name: 'Bare', brandId: brand.id }).expect(200)).body;
    u = await userWithRole(t, { scopes: { Product: { create: true, read: 'all', edit: 'all' }, Brand: { read: 'all' } } });
    adminId = (await t.get('/api/User?where[0][type]=equals&where[0][attribute]=userName&where[0][value]=admin').expect(200)).body.list[0].id;
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    it('gives the option objects of links to list options, by field: one or null, a list in the order of the ids', async () => {
      const res = await t.get(`${base}/Product?sortBy=name`).set('With-Meta', 'true').expect(200);
      const byName = Object.fromEntries(res.body.list.map((r: Rec) => [r.name, r._meta.options]));
      const tagOrder = [...full.tagsIds].map((id: string) => Object.values(o).find((x) => x.id === id));
      expect(byName.Full).toEqual({ status: o.active, tags: tagOrder });
      expect(byName.Bare).toEqual({ status: null, tags: [] });
      const one = await t.get(`${base}/Product/${full.id}?select=name`).set('With-Meta', 'true').expect(200);
      expect(one.body._meta.options).toEqual({ status: o.active, tags: tagOrder });
      expect(Object.keys(one.body)).toEqual(['id', 'name', '_meta']);
    });

    it('gives options in linked records and write answers, and none for entity types without such links', async () => {
      const linked = await t.get(`${base}/entityRelation?entityName=Brand&id=${brand.id}&link=products&sortBy=name`).set('With-Meta', 'true').expect(200);
      expect(linked.body.list.map((r: Rec) => r._meta.options.status)).toEqual([null, o.active]);
      const updated = await t.patch(`${base}/Product/${bare.id}`, { statusId: o.draft.id }).set('With-Meta', 'true').expect(200);
      expect(updated.body._meta.options).toEqual({ status: o.draft, tags: [] });
      await t.patch(`${base}/Product/${bare.id}`, { statusId: null }).expect(200);
      const brands = await t.get(`${base}/Brand`).set('With-Meta', 'true').expect(200);
      expect(brands.body.list[0]._meta.options).toBeUndefined();
    });

    it('leaves out option fields the caller may not read', async () => {
      const v = await userWithRole(t, { scopes: { Product: { read: 'all' } }, fields: { Product: { status: { read: false } } } });
      const res = await v.get(`${base}/Product/${full.id}`).set('With-Meta', 'true').expect(200);
      expect(res.body._meta.options).toEqual({ tags: expect.any(Array) });
      expect(res.body.statusId).toBeUndefined();
    });

    it("shows the record's own options whatever the caller reads of ExtensibleEnumOption, without the option fields its roles hide", async () => {
      const strip = (option: Option, hidden: string[]) => Object.fromEntries(Object.entries(option).filter(([key]) => !hidden.includes(key)));
      const roles: [string, { scopes: Record<string, Record<string, unknown>>; fields?: Record<string, Record<string, Record<string, boolean>>> }, string[]][] = [
        ['no right on options', { scopes: { Product: { read: 'all' }, Brand: { read: 'all' } } }, []],
        [
          'no right on options, code hidden',
          { scopes: { Product: { read: 'all' }, Brand: { read: 'all' }, ExtensibleEnumOption: { read: 'no' } }, fields: { ExtensibleEnumOption: { code: { read: false } } } },
          ['code'],
        ],
        [
          'reads options, code and color hidden',
          { scopes: { Product: { read: 'all' }, Brand: { read: 'all' }, ExtensibleEnumOption: { read: 'all' } }, fields: { ExtensibleEnumOption: { code: { read: false }, color: { read: false } } } },
          ['code', 'color'],
        ],
      ];
      for (const [name, role, hidden] of roles) {
        const v = await userWithRole(t, role);
        const status = (await v.get(`${base}/ExtensibleEnumOption/${o.active.id}`)).status;
        expect([name, status]).toEqual([name, role.scopes.ExtensibleEnumOption?.read === 'all' ? 200 : 403]);
        const expected = { status: strip(o.active, hidden), tags: [...full.tagsIds].map((id: string) => strip(Object.values(o).find((x) => x.id === id) as Option, hidden)) };
        const single = await v.get(`${base}/Product/${full.id}`).set('With-Meta', 'true').expect(200);
        const list = await v.get(`${base}/Product?sortBy=name`).set('With-Meta', 'true').expect(200);
        const linked = await v.get(`${base}/entityRelation?entityName=Brand&id=${brand.id}&link=products&sortBy=name`).set('With-Meta', 'true').expect(200);
        const shown = [single.body, ...list.body.list, ...linked.body.list].filter((r: Rec) => r.id === full.id).map((r: Rec) => r._meta.options);
        expect([name, shown]).toEqual([name, [expected, expected, expected]]);
        // The option's name shows as the link's name does.
        expect([name, single.body.statusName]).toEqual([name, o.active.name]);
      }
      const doc = t.api.openapi() as { components: { schemas: Record<string, { properties: Record<string, any> }> } };
      const description = doc.components.schemas.Product.properties._meta.properties.options.description as string;
      expect(description).not.toMatch(/ExtensibleEnumOption the caller may read/);
      expect(description).toMatch(/whatever the caller may read of ExtensibleEnumOption/);
      expect(description).toMatch(/leaves out the fields of ExtensibleEnumOption that the caller's roles hide/);
    });

    it('shows who acted for whom after a write in a delegated session, and nothing otherwise', async () => {
      const plain = await u.post(`${base}/Product`, { name: `Plain ${base}` }).set('With-Meta', 'true').expect(200);
      expect(plain.body._meta.audit).toBeUndefined();
      const delegated = clientFor(t, await delegatedToken(t, ADMIN.userName, ADMIN.password, u.user.userName), u.user);
      const actor = { id: adminId, name: 'Administrator', isSystem: false };
      const delegator = { id: u.user.id, name: (u.user as Rec).name, isSystem: false };
      const created = await delegated.post(`${base}/Product`, { name: `Delegated ${base}` }).set('With-Meta', 'true').expect(200);
      expect(created.body.createdById).toBe(u.user.id);
      expect(created.body._meta.audit).toEqual({ createdBy: { actor, delegator }, modifiedBy: { actor, delegator } });
      // the user's own change ends the delegated modification; the creation stays
      await u.patch(`${base}/Product/${created.body.id}`, { name: `Changed ${base}` }).expect(200);
      const read = await t.get(`${base}/Product/${created.body.id}?select=name`).set('With-Meta', 'true').expect(200);
      expect(read.body._meta.audit).toEqual({ createdBy: { actor, delegator } });
      expect(Object.keys(read.body)).toEqual(['id', 'name', '_meta']);
      const changed = await delegated.put(`${base}/Product/${plain.body.id}`, { name: `Plain ${base} 2` }).set('With-Meta', 'true').expect(200);
      expect(changed.body._meta.audit).toEqual({ modifiedBy: { actor, delegator } });
      const list = await u.get(`${base}/Product?where[0][type]=startsWith&where[0][attribute]=name&where[0][value]=${encodeURIComponent(`Plain ${base}`)}`).set('With-Meta', 'true').expect(200);
      expect(list.body.list.map((r: Rec) => r._meta.audit)).toEqual([{ modifiedBy: { actor, delegator } }]);
      const untouched = await t.get(`${base}/Product/${full.id}`).set('With-Meta', 'true').expect(200);
      expect(Object.keys(untouched.body._meta)).toEqual(['permissions', 'options']);
    });
  });

  it('costs one query more per page than the page itself, whatever its size', async () => {
    for (let i = 0; i < 30; i++) await t.post('/api/Product', { name: `Q${i}`, statusId: o.draft.id, tagsIds: [o.new.id] }).expect(200);
    const count = async (path: string, token: string, withMeta: boolean) => {
      const send = () => {
        const req = request(t.server).get(path).set('Authorization-Token', token);
        return (withMeta ? req.set('With-Meta', 'true') : req).expect(200);
      };
      await send();
      return countQueries(t, send);
    };
    for (const token of [t.token, u.token]) {
      // count + rows + categories + tags, then the options of the page
      expect(await count('/api/Product?maxSize=3', token, false)).toBe(4);
      expect(await count('/api/Product?maxSize=3', token, true)).toBe(5);
      expect(await count('/api/Product?maxSize=30', token, true)).toBe(5);
      expect(await count('/api/Product?maxSize=30&select=name', token, true)).toBe(4);
      expect(await count(`/api/Product/${full.id}`, token, true)).toBe(4);
    }
  });

  it('reads nothing for _meta in bulk writes, whose answers carry no records', async () => {
    const queries = (withMeta: boolean) =>
      countQueries(t, async () => {
        const req = t.post('/api/entityMassUpdate', { entityName: 'Product', ids: [full.id, bare.id], values: { name: `Mass ${withMeta}` } });
        expect((await (withMeta ? req.set('With-Meta', 'true') : req).expect(200)).body).toEqual({ updated: 2, errors: [] });
      });
    expect(await queries(true)).toBe(await queries(false));
    await t.post('/api/entityMassUpdate', { entityName: 'Product', ids: [full.id, bare.id], values: { name: 'Full' } }).expect(200);
    await t.patch(`/api/Product/${bare.id}`, { name: 'Bare' }).expect(200);
  });

  it('documents _meta and its categories in the OpenAPI document', () => {
    const doc = t.api.openapi() as { components: { schemas: Record<string, { properties: Record<string, any> }>; parameters: Record<string, any> } };
    expect(Object.keys(doc.components.schemas.Product.properties._meta.properties)).toEqual(['permissions', 'options', 'audit']);
    expect(doc.components.parameters.WithMeta).toMatchObject({ name: 'With-Meta', in: 'header' });
    expect(doc.components.parameters.Language).toBeUndefined();
  });
});

describe.each(TEST_DBS)('_meta.options with multilingual option names on %s', (kind) => {
  let t: TestApi;
  let product: Rec;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities, plugins: [multilang, meta], languages: ['en_US', 'de_DE'] });
    const o = await seedLists(t);
    await t.patch(`/api/ExtensibleEnumOption/${o.active.id}`, { nameDeDE: 'Aktiv' }).expect(200);
    product = (await t.post('/api/Product', { name: 'Chair', statusId: o.active.id, tagsIds: [o.new.id] }).expect(200)).body;
  });
  afterAll(() => t.close());

  it('has a valid OpenAPI document with both plugins', async () => {
    await expect(SwaggerParser.validate(structuredClone(t.api.openapi()) as never)).resolves.toBeDefined();
  });

  it.each(GENERATIONS)('names options in the language asked for (generation %s)', async (_gen, base) => {
    const german = await t.get(`${base}/Product/${product.id}`).set('With-Meta', 'true').set('language', 'de_DE').expect(200);
    expect(german.body._meta.options.status).toMatchObject({ code: 'active', name: 'Aktiv' });
    expect(german.body._meta.options.tags[0]).toMatchObject({ code: 'new', name: 'NEW' });
    expect(german.body.statusName).toBe('Aktiv');
    const main = await t.get(`${base}/Product?select=name`).set('With-Meta', 'true').expect(200);
    expect(main.body.list[0]._meta.options.status).toEqual(expect.objectContaining({ name: 'ACTIVE' }));
    expect(Object.keys(main.body.list[0]._meta.options.status)).toEqual(['id', 'code', 'name', 'color', 'sortOrder']);
  });
});
