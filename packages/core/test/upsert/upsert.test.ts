import request from 'supertest';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { UPSERT_PATHS } from './support';

describe.each(TEST_DBS)('upsert on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  describe.each(UPSERT_PATHS)('generation %s: %s', (gen, path, base) => {
    const tag = gen.replace(/\W/g, '');

    it('creates, updates and leaves unchanged, one result per item in order', async () => {
      const res = await t
        .post(path, [
          { entity: 'Brand', payload: { name: `U-${tag}`, code: 'one' } },
          { entity: 'Brand', payload: { name: `U-${tag}`, code: 'two' } },
          { entity: 'Brand', payload: { name: `U-${tag}`, code: 'two' } },
          { entity: 'Product', payload: { name: 'Up', sku: `UP-${tag}`, price: 1 } },
        ])
        .expect(200);
      expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Updated', 'NotModified', 'Created']);
      expect(res.body.every((r: { stored: boolean }) => r.stored)).toBe(true);
      expect(res.body[0].entity).toMatchObject({ name: `U-${tag}`, code: 'one' });
      expect(res.body[1].entity).toMatchObject({ name: `U-${tag}`, code: 'two' });
      expect(res.body[1].entity.id).toBe(res.body[0].entity.id);
      expect(res.body[3].entity).toMatchObject({ sku: `UP-${tag}`, price: 1, isActive: true });
      expect(res.body[3].entity.brandName).toBeUndefined();
      const brands = (await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=U-${tag}`).expect(200)).body;
      expect(brands.total).toBe(1);
      expect(brands.list[0].code).toBe('two');
    });

    it('finds records by keys holding quotes, backslashes, commas, braces and spaces', async () => {
      const skus = ['a"b', 'c\\d', 'e,f', '{g}', ' h ', 'NULL', "i'j", 'ü €'].map((s) => `${s}-${tag}`);
      const items = skus.map((sku, i) => ({ entity: 'Product', payload: { name: `Odd ${i}`, sku } }));
      const first = await t.post(path, items).expect(200);
      expect(first.body.map((r: { status: string }) => r.status)).toEqual(skus.map(() => 'Created'));
      const again = await t.post(path, items.map((item) => ({ ...item, payload: { ...item.payload, name: `${item.payload.name} again` } }))).expect(200);
      expect(again.body.map((r: { status: string }) => r.status)).toEqual(skus.map(() => 'Updated'));
      expect(again.body.map((r: { entity: { id: string } }) => r.entity.id)).toEqual(first.body.map((r: { entity: { id: string } }) => r.entity.id));
    });

    it('looks up by id, then unique fields, then unique indexes', async () => {
      const brand = (await t.post(`${base}/Brand`, { name: `Idx-${tag}` }).expect(200)).body;
      const byIndex = await t.post(path, [
        { entity: 'Product', payload: { name: 'First', brandId: brand.id, mpn: 'M1' } },
        { entity: 'Product', payload: { name: 'Second', brandId: brand.id, mpn: 'M1' } },
      ]).expect(200);
      expect(byIndex.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Updated']);
      const id = byIndex.body[0].entity.id;
      const byId = await t.post(path, [{ entity: 'Product', payload: { id, name: 'Third', sku: `SKU-ID-${tag}` } }]).expect(200);
      expect(byId.body[0]).toMatchObject({ status: 'Updated', entity: { id, name: 'Third' } });
      const bySku = await t.post(path, [{ entity: 'Product', payload: { sku: `SKU-ID-${tag}`, name: 'Fourth' } }]).expect(200);
      expect(bySku.body[0]).toMatchObject({ status: 'Updated', entity: { id, name: 'Fourth' } });
      const newId = await t.post(path, [{ entity: 'Product', payload: { id: `client-${tag}`, name: 'New with id' } }]).expect(200);
      expect(newId.body[0]).toMatchObject({ status: 'Created', entity: { id: `client-${tag}` } });
      // a unique field present is the lookup: naming no record, the item creates one (here colliding
      // with the unique index's record, which it did not look up by), as an unknown id creates one
      const newSku = await t.post(path, [{ entity: 'Product', payload: { sku: `SKU-NEW-${tag}`, name: 'Fifth', brandId: brand.id, mpn: 'M1' } }]).expect(200);
      expect(newSku.body[0]).toMatchObject({ status: 'Failed', stored: false });
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body).toMatchObject({ name: 'Fourth', sku: `SKU-ID-${tag}` });
    });

    it('fails bad items with a message and stores the others', async () => {
      const before = (await t.get(`${base}/Product?totalOnly=true`)).body.total;
      const res = await t
        .post(path, [
          { entity: 'Product', payload: { name: 'Good 1' } },
          { entity: 'Product', payload: { price: 'x' } },
          { entity: 'Nope', payload: {} },
          { entity: 'Product', payload: { name: 'Bad link', brandId: 'missing' } },
          { entity: 'Product', payload: 'not an object' },
          { entity: 'Product', payload: { sku: 'missing required name' } },
          { entity: 'Product', payload: { name: 'Good 2' } },
          { payload: {} },
        ])
        .expect(200);
      expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Failed', 'Failed', 'Failed', 'Failed', 'Failed', 'Created', 'Failed']);
      for (const r of res.body.filter((x: { status: string }) => x.status === 'Failed')) {
        expect(r).toEqual({ status: 'Failed', stored: false, message: expect.any(String) });
      }
      expect((await t.get(`${base}/Product?totalOnly=true`)).body.total).toBe(before + 2);
    });

    it('fails an item whose unique fields point at different records, and a unique collision', async () => {
      await t.post(`${base}/Product`, { name: 'A', sku: `A-${tag}` }).expect(200);
      const b = (await t.post(`${base}/Product`, { name: 'B', sku: `B-${tag}` }).expect(200)).body;
      const res = await t.post(path, [
        { entity: 'Product', payload: { id: b.id, sku: `A-${tag}` } },
        { entity: 'Product', payload: { id: `other-${tag}`, name: 'Collides', sku: `A-${tag}` } },
        { entity: 'Product', payload: { name: 'Fine' } },
      ]).expect(200);
      expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Failed', 'Failed', 'Created']);
      expect((await t.get(`${base}/Product/${b.id}`)).body.sku).toBe(`B-${tag}`);
    });

    it('sets multiple links and compares them as sets', async () => {
      const c1 = (await t.post(`${base}/Category`, { name: 'c1', code: `uc1-${tag}` }).expect(200)).body.id;
      const c2 = (await t.post(`${base}/Category`, { name: 'c2', code: `uc2-${tag}` }).expect(200)).body.id;
      const res = await t.post(path, [
        { entity: 'Product', payload: { sku: `L-${tag}`, name: 'Linked', categoriesIds: [c1, c2] } },
        { entity: 'Product', payload: { sku: `L-${tag}`, categoriesIds: [c2, c1] } },
        { entity: 'Product', payload: { sku: `L-${tag}`, categoriesIds: [c2] } },
      ]).expect(200);
      expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'NotModified', 'Updated']);
      const p = (await t.get(`${base}/Product/${res.body[0].entity.id}`)).body;
      expect(p.categoriesIds).toEqual([c2]);
    });

    it('hashes passwords of users stored by upsert', async () => {
      const res = await t.post(path, [{ entity: 'User', payload: { userName: `up-${tag}`, password: 'up-secret-1' } }]).expect(200);
      expect(res.body[0].status).toBe('Created');
      expect(res.body[0].entity.password).toBeUndefined();
      await request(t.server).get('/api/userSession').auth(`up-${tag}`, 'up-secret-1').expect(200);
    });
  });

  it('stores a batch larger than one insert statement takes', async () => {
    const items = Array.from({ length: 1200 }, (_, i) => ({ entity: 'Category', payload: { name: `big ${i}`, code: `big-${i}` } }));
    const res = await t.post('/api/upsert', items).expect(200);
    expect(res.body.filter((r: { status: string }) => r.status === 'Created')).toHaveLength(1200);
    expect((await t.get('/api/Category?totalOnly=true&where[0][type]=startsWith&where[0][attribute]=code&where[0][value]=big-').expect(200)).body.total).toBe(1200);
  });

  it('stores every field type as a single create and update do', async () => {
    const brandId = (await t.post('/api/Brand', { name: 'Typed brand' }).expect(200)).body.id;
    const categoryId = (await t.post('/api/Category', { name: 'Typed', code: 'typed' }).expect(200)).body.id;
    const first = {
      name: 'Typed "quoted" \\ naïve 🚀',
      mpn: null,
      description: 'line 1\nline 2',
      price: 12.5,
      quantity: -3,
      isActive: false,
      releaseDate: '2024-02-29',
      availableAt: '2024-03-01T10:20:30+02:00',
      color: 'green',
      labels: ['sale', 'eco'],
      specs: { weight: 1.5, tags: ['a', 'b'], nested: { on: true } },
      brandId,
      categoriesIds: [categoryId],
    };
    const second = { ...first, description: null, price: 0, quantity: 0, isActive: true, labels: [], specs: null, color: null, categoriesIds: [] };
    const read = async (id: string) => {
      const { id: _id, createdAt: _c, modifiedAt: _m, sku: _s, ...rest } = (await t.get(`/api/Product/${id}`).expect(200)).body;
      return rest;
    };
    for (const values of [first, second]) {
      const single = (await t.post('/api/Product', { ...values, sku: `typed-single-${values.price}` }).expect(200)).body;
      const res = await t.post('/api/upsert', [{ entity: 'Product', payload: { ...values, sku: `typed-bulk-${values.price}` } }]).expect(200);
      expect(res.body[0].status).toBe('Created');
      expect(await read(res.body[0].entity.id)).toEqual(await read(single.id));
    }
    const created = (await t.post('/api/upsert', [{ entity: 'Product', payload: { ...first, sku: 'typed-changed' } }]).expect(200)).body[0].entity;
    const changed = await t.post('/api/upsert', [{ entity: 'Product', payload: { ...second, sku: 'typed-changed' } }]).expect(200);
    expect(changed.body[0]).toMatchObject({ status: 'Updated', entity: { id: created.id } });
    const single = (await t.post('/api/Product', { ...first, sku: 'typed-patched' }).expect(200)).body;
    await t.patch(`/api/Product/${single.id}`, second).expect(200);
    expect(await read(created.id)).toEqual(await read(single.id));
    const again = await t.post('/api/upsert', [{ entity: 'Product', payload: { ...second, sku: 'typed-changed' } }]).expect(200);
    expect(again.body[0].status).toBe('NotModified');
  });

  it('links many records in one batch and replaces their links in the next', async () => {
    const [c1, c2] = await Promise.all(
      ['many-1', 'many-2'].map(async (code) => (await t.post('/api/Category', { name: code, code }).expect(200)).body.id as string),
    );
    const batch = (categoriesIds: string[], price: number) => Array.from({ length: 700 }, (_, i) => ({ entity: 'Product', payload: { name: `many ${i}`, sku: `many-${i}`, price, categoriesIds } }));
    const created = await t.post('/api/upsert', batch([c1, c2], 1)).expect(200);
    expect(created.body.filter((r: { status: string }) => r.status === 'Created')).toHaveLength(700);
    const updated = await t.post('/api/upsert', batch([c2], 2)).expect(200);
    expect(updated.body.filter((r: { status: string }) => r.status === 'Updated')).toHaveLength(700);
    const list = (await t.get('/api/Product?select=sku,price,categoriesIds&maxSize=1000&where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=many-').expect(200)).body;
    expect(list.total).toBe(700);
    for (const p of list.list) expect(p).toMatchObject({ price: 2, categoriesIds: [c2] });
  });

  it('fails only the item whose update the database refuses, and stores the others', async () => {
    const brandId = (await t.post('/api/Brand', { name: 'Refusing brand' }).expect(200)).body.id;
    const made = [];
    for (const mpn of ['REF-1', 'REF-2', 'REF-3']) made.push((await t.post('/api/Product', { name: mpn, brandId, mpn }).expect(200)).body);
    // The batch names neither the record holding (brand, REF-1) nor a complete (brand, mpn) tuple,
    // so it cannot see the collision: the database refuses that update, the other one is stored.
    const res = await t.post('/api/upsert', [
      { entity: 'Product', payload: { id: made[1].id, mpn: 'REF-1' } },
      { entity: 'Product', payload: { id: made[2].id, name: 'REF-3 renamed' } },
    ]).expect(200);
    expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Failed', 'Updated']);
    expect(res.body[0].message).toMatch(/already exists/);
    expect((await t.get(`/api/Product/${made[1].id}`).expect(200)).body.mpn).toBe('REF-2');
    expect((await t.get(`/api/Product/${made[2].id}`).expect(200)).body.name).toBe('REF-3 renamed');
  });

  it('answers 400 for a body that is not an array', async () => {
    await t.post('/api/upsert', { entity: 'Brand' }).expect(400);
  });

  it('respects roles item by item', async () => {
    const role = (await t.post('/api/Role', { name: 'upsert reader', scopes: { Brand: { read: 'all', create: true, edit: 'no' } } }).expect(200)).body;
    await t.post('/api/User', { userName: 'upserter', password: 'pw-upsert', rolesIds: [role.id] }).expect(200);
    const token = (await request(t.server).get('/api/userSession').auth('upserter', 'pw-upsert').set('Authorization-Token-Only', 'true')).body.authorizationToken;
    await t.post('/api/Brand', { name: 'Existing for role' }).expect(200);
    const res = await request(t.server)
      .post('/api/upsert')
      .set('Authorization-Token', token)
      .send([
        { entity: 'Brand', payload: { name: 'New by role' } },
        { entity: 'Brand', payload: { name: 'Existing for role', code: 'x' } },
        { entity: 'Product', payload: { name: 'no rights' } },
      ])
      .expect(200);
    expect(res.body.map((r: { status: string }) => r.status)).toEqual(['Created', 'Failed', 'Failed']);
  });
});
