import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, createWeight, FLAT, startAttributeApi, unique } from '../attributes/support';

jest.setTimeout(60_000);

/**
 * A permanent delete never leaves a record without a value it must have: while a record, live or
 * in the bin, names it in a required link (a unit's measure, an option's list), or an attribute
 * names it as its measure (fixed once the attribute exists), the delete is 409 CORE_CONFLICT and
 * nothing changes. Once those are gone, the delete goes through.
 */
describe.each(TEST_DBS)('permanent deletes of records that required links name on %s', (kind) => {
  let t: TestApi;

  beforeAll(async () => {
    t = await startAttributeApi(kind);
  });
  afterAll(() => t.close());

  const purge = (base: string, entity: string, id: string) => t.del(`${base}/${entity}/${id}`).set('permanently', 'true');
  const expectRefused = async (base: string, { entity, id, by }: { entity: string; id: string; by: { entity: string; field: string } }) => {
    const res = await purge(base, entity, id).expect(409);
    expect(res.body.error).toMatchObject({ code: 'CORE_CONFLICT', details: { entity, id, by } });
    expect(res.body.error.message).toContain(`${by.entity}.${by.field}`);
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('refuses to purge a measure whose units name it (in the bin too), and purges it once they are gone', async () => {
      const { measureId, kg, g } = await createWeight(t, unique('weight'));
      await expectRefused(base, { entity: 'Measure', id: measureId, by: { entity: 'Unit', field: 'measure' } });
      // Nothing changed: the units keep their measure, and the measure is there.
      expect((await t.get(`${base}/Unit/${kg}`).expect(200)).body.measureId).toBe(measureId);
      expect((await t.get(`${base}/Measure/${measureId}`).expect(200)).body.unitsIds.sort()).toEqual([kg, g].sort());

      // A soft-deleted measure is refused alike: its units would be restored without one.
      await t.del(`${base}/Measure/${measureId}`).expect(200);
      await expectRefused(base, { entity: 'Measure', id: measureId, by: { entity: 'Unit', field: 'measure' } });
      await t.post(`${base}/entityRestore`, { entityName: 'Measure', ids: [measureId] }).expect(200);

      // A unit in the bin still names the measure.
      await purge(base, 'Unit', kg).expect(200);
      await t.del(`${base}/Unit/${g}`).expect(200);
      await expectRefused(base, { entity: 'Measure', id: measureId, by: { entity: 'Unit', field: 'measure' } });
      await t.post(`${base}/entityRestore`, { entityName: 'Unit', ids: [g] }).expect(200);
      expect((await t.get(`${base}/Unit/${g}`).expect(200)).body.measureId).toBe(measureId);

      await purge(base, 'Unit', g).expect(200);
      expect((await purge(base, 'Measure', measureId).expect(200)).body).toBe(true);
      await t.get(`${base}/Measure/${measureId}`).expect(404);
    });

    it('refuses to purge a measure that an attribute (in the bin too) carries its values in', async () => {
      const measureId = (await t.post('/api/Measure', { name: 'Length', code: unique('length') }).expect(200)).body.id as string;
      const code = unique('len');
      const attributeId = await createAttribute(t, { code, type: 'int', measureId });
      const product = (await t.post('/api/Product', { name: unique('Long '), [code]: 3 }).set(FLAT).expect(200)).body.id as string;
      await expectRefused(base, { entity: 'Measure', id: measureId, by: { entity: 'Attribute', field: 'measure' } });
      expect((await t.get(`${base}/Attribute/${attributeId}`).expect(200)).body.measureId).toBe(measureId);

      await t.del(`${base}/Attribute/${attributeId}`).expect(200);
      await expectRefused(base, { entity: 'Measure', id: measureId, by: { entity: 'Attribute', field: 'measure' } });
      await t.post(`${base}/entityRestore`, { entityName: 'Attribute', ids: [attributeId] }).expect(200);
      expect((await t.get(`/api/Product/${product}`).set(FLAT).expect(200)).body[code]).toBe(3);
      expect((await t.get(`${base}/Attribute/${attributeId}`).expect(200)).body.measureId).toBe(measureId);

      await purge(base, 'Attribute', attributeId).expect(200);
      await purge(base, 'Measure', measureId).expect(200);
    });

    it('refuses to purge a list whose options name it, and purges it once they are gone', async () => {
      const list = (await t.post('/api/ExtensibleEnum', { name: 'Colors', code: unique('colors') }).expect(200)).body.id as string;
      const option = (await t.post('/api/ExtensibleEnumOption', { name: 'Red', code: 'red', extensibleEnumId: list }).expect(200)).body.id as string;
      await expectRefused(base, { entity: 'ExtensibleEnum', id: list, by: { entity: 'ExtensibleEnumOption', field: 'extensibleEnum' } });
      expect((await t.get(`${base}/ExtensibleEnumOption/${option}`).expect(200)).body.extensibleEnumId).toBe(list);
      await purge(base, 'ExtensibleEnumOption', option).expect(200);
      await purge(base, 'ExtensibleEnum', list).expect(200);
    });
  });
});
