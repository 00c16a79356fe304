import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, createWeight, FLAT, startAttributeApi } from './support';

describe.each(TEST_DBS)('flattened attributes on %s', (kind) => {
  let t: TestApi;
  let ids: Record<string, string>;
  let units: { measureId: string; kg: string; g: string };
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    units = await createWeight(t);
    ids = {
      shade: await createAttribute(t, { code: 'shade', type: 'varchar', isMultilang: true }),
      weight: await createAttribute(t, { code: 'weight', type: 'float', measureId: units.measureId }),
      size: await createAttribute(t, { code: 'size', type: 'enum', options: ['S', 'M', 'L'] }),
    };
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('writes and reads virtual fields', async () => {
      const p = (await t.post(`${base}/Product`, { name: 'Chair' }).expect(200)).body;
      const res = await t.patch(`${base}/Product/${p.id}`, { shade: 'red', shadeDeDE: 'rot', weight: 2.5, size: 'M' }).set(FLAT);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ shade: 'red', shadeDeDE: 'rot', weight: 2.5, weightUnitId: units.kg, weightUnitName: 'kg', size: 'M' });
      expect(res.body.attributesDefs.weight).toMatchObject({ attributeId: ids.weight, type: 'float', measureId: units.measureId });
      const read = (await t.get(`${base}/Product/${p.id}`).set(FLAT).expect(200)).body;
      expect(read).toMatchObject({ shade: 'red', shadeDeDE: 'rot', weight: 2.5 });
      const plain = (await t.get(`${base}/Product/${p.id}`).expect(200)).body;
      expect(plain.shade).toBeUndefined();
      const list = (await t.get(`${base}/Product?allAttributes=true`).set(FLAT).expect(200)).body;
      const item = list.list.find((r: { id: string }) => r.id === p.id);
      expect(item).toMatchObject({ shade: 'red', weight: 2.5 });
      expect(item.attributesDefs.weight).toEqual({ attributeId: ids.weight, type: 'float' });
      const de = (await t.get(`${base}/Product/${p.id}`).set(FLAT).set('language', 'de_DE').expect(200)).body;
      expect(de.shade).toBe('rot');
      expect(de.shadeDeDE).toBeUndefined();
      const filtered = (await t.get(`${base}/Product?attributes=${ids.weight}&sortBy=weight&where[0][type]=greaterThan&where[0][attribute]=weight&where[0][isAttribute]=true&where[0][value]=1`).set(FLAT).expect(200)).body;
      expect(filtered.list.map((r: { id: string }) => r.id)).toContain(p.id);
      const values = (await t.get(`${base}/Product/${p.id}/attributeValues`).expect(200)).body;
      expect(values).toHaveLength(3);
    });
  });
});
