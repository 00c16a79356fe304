import { defineEntity } from '@entity-records/core';
import { startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { UPSERT_PATHS, type UpsertResult } from './support';

/**
 * A batch gives exactly the results of processing its items one at a time, in order, and stores
 * exactly what its results report: also when an item frees a unique value a later item takes, when
 * items swap unique values, and when items move hasMany links between records.
 */
const statuses = (body: UpsertResult[]) => body.map((r) => `${r.status}${r.message ? `: ${r.message}` : ''}`);

describe.each(TEST_DBS)('upsert in item order on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  describe.each(UPSERT_PATHS)('generation %s: %s', (gen, path, base) => {
    const upsert = async (items: { entity: string; payload: Record<string, unknown> }[]) => (await t.post(path, items).expect(200)).body as UpsertResult[];
    const read = async (entity: string, id: string) => (await t.get(`${base}/${entity}/${id}`).expect(200)).body as Record<string, unknown>;
    const product = async (payload: Record<string, unknown>) => (await t.post(`${base}/Product`, payload).expect(200)).body as Record<string, unknown>;
    const bySku = async (sku: string) => (await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=sku&where[0][value]=${sku}`).expect(200)).body.list as Record<string, unknown>[];

    it('creates a record for a unique value an earlier item cleared', async () => {
      const a = await product({ name: 'Holder', sku: `FREE-${gen}` });
      const body = await upsert([
        { entity: 'Product', payload: { id: a.id, sku: null } },
        { entity: 'Product', payload: { sku: `FREE-${gen}`, name: 'new' } },
      ]);
      expect(statuses(body)).toEqual(['Updated', 'Created']);
      expect(body[0].entity).toMatchObject({ id: a.id, sku: null, name: 'Holder' });
      expect(body[1].entity).toMatchObject({ sku: `FREE-${gen}`, name: 'new' });
      expect(body[1].entity?.id).not.toBe(a.id);
      expect(await read('Product', a.id as string)).toMatchObject({ sku: null, name: 'Holder' });
      expect(await read('Product', body[1].entity?.id as string)).toMatchObject({ sku: `FREE-${gen}`, name: 'new' });
      expect((await bySku(`FREE-${gen}`)).map((p) => p.id)).toEqual([body[1].entity?.id]);
    });

    it('creates a record for a unique value an earlier item changed', async () => {
      const a = await product({ name: 'Changer', sku: `S7-${gen}` });
      const body = await upsert([
        { entity: 'Product', payload: { id: a.id, sku: `S8-${gen}` } },
        { entity: 'Product', payload: { sku: `S7-${gen}`, name: 'R4' } },
      ]);
      expect(statuses(body)).toEqual(['Updated', 'Created']);
      expect(body[0].entity).toMatchObject({ id: a.id, sku: `S8-${gen}`, name: 'Changer' });
      expect(body[1].entity).toMatchObject({ sku: `S7-${gen}`, name: 'R4' });
      expect(await read('Product', a.id as string)).toMatchObject({ sku: `S8-${gen}`, name: 'Changer' });
      expect(await read('Product', body[1].entity?.id as string)).toMatchObject({ sku: `S7-${gen}`, name: 'R4' });
    });

    it('creates a record with a client id and a unique value an earlier item moved to another record', async () => {
      const a = await product({ name: 'Mover', sku: `SA-${gen}` });
      const body = await upsert([
        { entity: 'Product', payload: { id: a.id, sku: `SB-${gen}` } },
        { entity: 'Product', payload: { id: `newid1-${gen}`, sku: `SA-${gen}`, name: 'Client id' } },
      ]);
      expect(statuses(body)).toEqual(['Updated', 'Created']);
      expect(body[1].entity).toMatchObject({ id: `newid1-${gen}`, sku: `SA-${gen}`, name: 'Client id' });
      expect(await read('Product', a.id as string)).toMatchObject({ sku: `SB-${gen}`, name: 'Mover' });
      expect(await read('Product', `newid1-${gen}`)).toMatchObject({ sku: `SA-${gen}`, name: 'Client id' });
    });

    it('creates a record for a unique index value an earlier item freed', async () => {
      const brandId = (await t.post(`${base}/Brand`, { name: `Ix-free-${gen}` }).expect(200)).body.id;
      const a = await product({ name: 'Indexed', brandId, mpn: 'M-FREE' });
      const body = await upsert([
        { entity: 'Product', payload: { id: a.id, mpn: null } },
        { entity: 'Product', payload: { brandId, mpn: 'M-FREE', name: 'Second' } },
      ]);
      expect(statuses(body)).toEqual(['Updated', 'Created']);
      expect(await read('Product', a.id as string)).toMatchObject({ mpn: null, name: 'Indexed', brandId });
      expect(await read('Product', body[1].entity?.id as string)).toMatchObject({ mpn: 'M-FREE', name: 'Second', brandId });
    });

    it('swaps unique values through a temporary one', async () => {
      const a = await product({ name: 'Swap A', sku: `SWA-${gen}` });
      const b = await product({ name: 'Swap B', sku: `SWB-${gen}` });
      const body = await upsert([
        { entity: 'Product', payload: { id: a.id, sku: `SWT-${gen}` } },
        { entity: 'Product', payload: { id: b.id, sku: `SWA-${gen}` } },
        { entity: 'Product', payload: { id: a.id, sku: `SWB-${gen}` } },
      ]);
      expect(statuses(body)).toEqual(['Updated', 'Updated', 'Updated']);
      expect(body.map((r) => [r.entity?.id, r.entity?.sku])).toEqual([
        [a.id, `SWT-${gen}`],
        [b.id, `SWA-${gen}`],
        [a.id, `SWB-${gen}`],
      ]);
      expect(await read('Product', a.id as string)).toMatchObject({ sku: `SWB-${gen}`, name: 'Swap A' });
      expect(await read('Product', b.id as string)).toMatchObject({ sku: `SWA-${gen}`, name: 'Swap B' });
    });

    it('stores and reports every other item of a batch with a swap, before and after it', async () => {
      const a = await product({ name: 'Around A', sku: `ARA-${gen}` });
      const b = await product({ name: 'Around B', sku: `ARB-${gen}` });
      const body = await upsert([
        { entity: 'Product', payload: { sku: `ARN-${gen}`, name: 'Before' } },
        { entity: 'Product', payload: { id: a.id, sku: null } },
        { entity: 'Product', payload: { id: b.id, sku: `ARA-${gen}` } },
        { entity: 'Product', payload: { id: a.id, sku: `ARB-${gen}` } },
        { entity: 'Product', payload: { sku: `ARN-${gen}`, name: 'After' } },
        { entity: 'Product', payload: { id: b.id, sku: `ARB-${gen}` } },
      ]);
      expect(statuses(body)).toEqual(['Created', 'Updated', 'Updated', 'Updated', 'Updated', `Failed: ${body[5].message}`]);
      expect(body[5].message).toMatch(/already exists/);
      expect(await read('Product', a.id as string)).toMatchObject({ sku: `ARB-${gen}` });
      expect(await read('Product', b.id as string)).toMatchObject({ sku: `ARA-${gen}` });
      expect(await read('Product', body[0].entity?.id as string)).toMatchObject({ sku: `ARN-${gen}`, name: 'After' });
    });

    describe('hasMany links moved by one item and set again by a later one', () => {
      const brand = async (name: string) => (await t.post(`${base}/Brand`, { name }).expect(200)).body.id as string;
      const productsOf = async (id: string) => ((await read('Brand', id)).productsIds as string[]).sort();

      it('links a record back to the brand it was taken from', async () => {
        const b1 = await brand(`B1-${gen}`);
        const b2 = await brand(`B2-${gen}`);
        const p2 = (await product({ name: 'p2', brandId: b1 })).id as string;
        const body = await upsert([
          { entity: 'Brand', payload: { name: `B2-${gen}`, productsIds: [p2] } },
          { entity: 'Brand', payload: { name: `B1-${gen}`, productsIds: [p2] } },
        ]);
        expect(statuses(body)).toEqual(['Updated', 'Updated']);
        expect(body[0].entity).toMatchObject({ id: b2, productsIds: [p2] });
        expect(body[1].entity).toMatchObject({ id: b1, productsIds: [p2] });
        expect(await productsOf(b1)).toEqual([p2]);
        expect(await productsOf(b2)).toEqual([]);
        expect((await read('Product', p2)).brandId).toBe(b1);
      });

      it('moves a record away and back within one batch, from a brand the batch creates', async () => {
        const b1 = await brand(`C1-${gen}`);
        const [p1, p2] = [(await product({ name: 'c-p1', brandId: b1 })).id as string, (await product({ name: 'c-p2', brandId: b1 })).id as string];
        const body = await upsert([
          { entity: 'Brand', payload: { name: `C1-${gen}`, code: 'renamed' } },
          { entity: 'Brand', payload: { name: `C2-${gen}`, productsIds: [p2] } },
          { entity: 'Brand', payload: { name: `C1-${gen}`, productsIds: [p1, p2] } },
          { entity: 'Brand', payload: { name: `C2-${gen}`, productsIds: [p2] } },
          { entity: 'Brand', payload: { name: `C1-${gen}`, productsIds: [p1] } },
        ]);
        expect(statuses(body)).toEqual(['Updated', 'Created', 'Updated', 'Updated', 'NotModified']);
        const b2 = body[1].entity?.id as string;
        expect(body[2].entity).toMatchObject({ id: b1, code: 'renamed' });
        expect((body[2].entity?.productsIds as string[]).sort()).toEqual([p1, p2].sort());
        expect(body[3].entity).toMatchObject({ id: b2, productsIds: [p2] });
        expect(body[4].entity).toMatchObject({ id: b1, productsIds: [p1] });
        expect(await productsOf(b1)).toEqual([p1]);
        expect(await productsOf(b2)).toEqual([p2]);
      });
    });
  });
});

describe.each(TEST_DBS)('upsert of links between records of one type on %s', (kind) => {
  const Node = defineEntity({
    name: 'Node',
    fields: {
      name: { type: 'varchar', required: true, unique: true },
      parent: { type: 'link', entity: 'Node', foreign: 'children' },
      children: { type: 'linkMultiple', entity: 'Node', foreign: 'parent' },
    },
  });
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Node] });
  });
  afterAll(() => t.close());

  it.each(UPSERT_PATHS)('shows and stores a parent set through the other side by an earlier item (generation %s)', async (gen, path, base) => {
    const read = async (id: string) => (await t.get(`${base}/Node/${id}`).expect(200)).body as Record<string, unknown>;
    const body = (await t.post(path, [
      { entity: 'Node', payload: { name: `root-${gen}` } },
      { entity: 'Node', payload: { name: `leaf-${gen}` } },
      { entity: 'Node', payload: { name: `root-${gen}`, childrenIds: [] } },
    ]).expect(200)).body as UpsertResult[];
    const [root, leaf] = [body[0].entity?.id as string, body[1].entity?.id as string];
    const next = (await t.post(path, [
      { entity: 'Node', payload: { name: `root-${gen}`, childrenIds: [leaf] } },
      { entity: 'Node', payload: { name: `leaf-${gen}`, parentId: null } },
      { entity: 'Node', payload: { name: `root-${gen}` } },
    ]).expect(200)).body as UpsertResult[];
    expect(statuses(next)).toEqual(['Updated', 'Updated', 'NotModified']);
    expect(next[0].entity).toMatchObject({ id: root, childrenIds: [leaf] });
    expect(next[1].entity).toMatchObject({ id: leaf, parentId: null });
    expect(next[2].entity).toMatchObject({ id: root, childrenIds: [] });
    expect(await read(leaf)).toMatchObject({ parentId: null });
    expect(await read(root)).toMatchObject({ childrenIds: [] });
  });
});
