import meta from '@entity-records/meta';
import { GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../test/support/users';
import { entities } from './fixtures';

type Rec = Record<string, any> & { id: string };
const ALL = { edit: true, delete: true, stream: true };

describe.each(TEST_DBS)('_meta.permissions on %s', (kind) => {
  let t: TestApi;
  let u: UserClient;
  let brand: Rec;
  let cats: Rec[];
  let mine: Rec;
  let theirs: Rec;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities, plugins: [meta] });
    u = await userWithRole(t, {
      scopes: {
        Product: { create: true, read: 'all', edit: 'own', delete: 'own', stream: true },
        Brand: { read: 'all', edit: 'no', delete: 'no' },
        Category: { read: 'all', edit: 'all', delete: 'no', stream: false },
      },
    });
    brand = (await t.post('/api/Brand', { name: 'Acme' }).expect(200)).body;
    cats = [];
    for (const name of ['A', 'B']) cats.push((await t.post('/api/Category', { name }).expect(200)).body);
    mine = (await u.post('/api/Product', { name: 'Mine', brandId: brand.id, categoriesIds: cats.map((c) => c.id) }).expect(200)).body;
    theirs = (await t.post('/api/Product', { name: 'Theirs', brandId: brand.id, categoriesIds: [cats[0].id] }).expect(200)).body;
    await t.post('/api/Product', { name: 'Assigned', assignedUserId: u.user.id, brandId: brand.id }).expect(200);
  });
  afterAll(() => t.close());

  const metaOf = (body: { list: Rec[] }) => Object.fromEntries(body.list.map((r) => [r.name, r._meta.permissions]));

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    it('is absent without With-Meta, and with any value but true or 1', async () => {
      for (const value of [undefined, 'false', '0', 'yes']) {
        const req = t.get(`${base}/Product`);
        const res = await (value === undefined ? req : req.set('With-Meta', value)).expect(200);
        expect(res.body.list.filter((r: Rec) => '_meta' in r)).toEqual([]);
      }
    });

    it('gives admins every right on lists, single records and write answers', async () => {
      for (const value of ['true', '1']) {
        const list = await t.get(`${base}/Product`).set('With-Meta', value).expect(200);
        expect(list.body.list.map((r: Rec) => r._meta.permissions)).toEqual([ALL, ALL, ALL]);
      }
      expect((await t.get(`${base}/Product/${mine.id}`).set('With-Meta', 'true').expect(200)).body._meta.permissions).toEqual(ALL);
      const created = await t.post(`${base}/Category`, { name: `New ${base}` }).set('With-Meta', 'true').expect(200);
      expect(created.body._meta).toEqual({ permissions: ALL });
      for (const method of ['patch', 'put'] as const) {
        const updated = await t[method](`${base}/Category/${created.body.id}`, { name: `New ${base} ${method}` }).set('With-Meta', '1').expect(200);
        expect(updated.body._meta).toEqual({ permissions: ALL });
      }
    });

    it('judges own rights per record, owned by creation or assignment, whatever the select', async () => {
      for (const select of ['', '?select=name']) {
        const res = await u.get(`${base}/Product${select}`).set('With-Meta', 'true').expect(200);
        expect(metaOf(res.body)).toEqual({
          Mine: { edit: true, delete: true, stream: true },
          Theirs: { edit: false, delete: false, stream: true },
          Assigned: { edit: true, delete: true, stream: true },
        });
        if (select) expect(Object.keys(res.body.list[0])).toEqual(['id', 'name', '_meta']);
      }
      const one = await u.get(`${base}/Product/${theirs.id}?select=name`).set('With-Meta', 'true').expect(200);
      expect(one.body).toEqual({ id: theirs.id, name: 'Theirs', _meta: expect.objectContaining({ permissions: { edit: false, delete: false, stream: true } }) });
      const brands = await u.get(`${base}/Brand`).set('With-Meta', 'true').expect(200);
      expect(brands.body.list[0]._meta.permissions).toEqual({ edit: false, delete: false, stream: false });
      const updated = await u.patch(`${base}/Product/${mine.id}`, { name: 'Mine' }).set('With-Meta', 'true').expect(200);
      expect(updated.body._meta.permissions).toEqual({ edit: true, delete: true, stream: true });
    });

    it('adds unlink in linked-record responses only, from the rights on the record the link starts from', async () => {
      const linked = (entity: string, id: string, link: string) => {
        const paths = [`${base}/entityRelation?entityName=${entity}&id=${id}&link=${link}`];
        if (base === '/api/v1') paths.push(`${base}/${entity}/${id}/${link}`);
        return paths;
      };
      for (const path of linked('Product', mine.id, 'categories')) {
        const res = await u.get(path).set('With-Meta', 'true').expect(200);
        expect(res.body.list.map((r: Rec) => r._meta.permissions)).toEqual([
          { edit: true, delete: false, stream: false, unlink: true },
          { edit: true, delete: false, stream: false, unlink: true },
        ]);
      }
      for (const path of linked('Product', theirs.id, 'categories')) {
        const res = await u.get(path).set('With-Meta', 'true').expect(200);
        expect(res.body.list[0]._meta.permissions.unlink).toBe(false);
      }
      for (const path of linked('Product', mine.id, 'brand')) {
        const res = await u.get(path).set('With-Meta', 'true').expect(200);
        expect(res.body.list[0]._meta.permissions).toEqual({ edit: false, delete: false, stream: false, unlink: true });
      }
      // has-many: unlinking is an update of the brand's link, which this user may not edit
      for (const path of linked('Brand', brand.id, 'products')) {
        const res = await u.get(`${path}${path.includes('?') ? '&' : '?'}select=name`).set('With-Meta', 'true').expect(200);
        expect(Object.fromEntries(res.body.list.map((r: Rec) => [r.name, r._meta.permissions.unlink]))).toEqual({ Mine: false, Theirs: false, Assigned: false });
        await u.del(`${base}/Brand/${brand.id}/products`).send({ id: res.body.list[0].id }).expect(403);
      }
      for (const path of linked('Product', mine.id, 'categories')) {
        const admin = await t.get(path).set('With-Meta', 'true').expect(200);
        expect(admin.body.list[0]._meta.permissions).toEqual({ ...ALL, unlink: true });
      }
    });

    it('does not let a field right an unlink cannot use', async () => {
      const v = await userWithRole(t, {
        scopes: { Product: { read: 'all', edit: 'all' }, Category: { read: 'all' } },
        fields: { Product: { categories: { edit: false } } },
      });
      const res = await v.get(`${base}/entityRelation?entityName=Product&id=${mine.id}&link=categories`).set('With-Meta', 'true').expect(200);
      expect(res.body.list.map((r: Rec) => r._meta.permissions.unlink)).toEqual([false, false]);
    });
  });

  it('leaves _meta out of upsert results', async () => {
    const res = await t.post('/api/upsert', [{ entity: 'Category', payload: { name: 'Upserted' } }]).set('With-Meta', 'true').expect(200);
    expect(res.body[0].status).toBe('Created');
    expect(res.body[0].entity._meta).toBeUndefined();
  });
});
