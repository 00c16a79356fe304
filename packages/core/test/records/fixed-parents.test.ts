import { defineEntity } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';

/**
 * An option stays in the list it was created in, a unit in its measure. A link to an option is
 * judged by the field's own list, a unit by the attribute's measure, so moving either would leave
 * every record that links to it pointing at an option of another list (a unit of another
 * measure). No route moves one: an update of the option or unit (PATCH, PUT, upsert,
 * entityMassUpdate, the link route of its single link), nor a write of the list side
 * (`ExtensibleEnum.options`, `Measure.units`: its link routes, an update, a create whose link
 * objects find an option of another list). Each is 400 CORE_READ_ONLY_FIELD and moves nothing
 * (emptying the link is the 400 of a required value).
 */
const Product = defineEntity({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true },
    status: { type: 'link', entity: 'ExtensibleEnumOption', extensibleEnum: 'fixed_status' },
  },
});

type Answer = { status: number; body: any };
const refusal = (res: Answer) => ({ status: res.status, code: res.body.error?.code });
const READ_ONLY = { status: 400, code: 'CORE_READ_ONLY_FIELD' };

describe.each(TEST_DBS)('the list of an option and the measure of a unit are fixed, on %s', (kind) => {
  let t: TestApi;
  let serial = 0;
  const unique = (prefix: string) => `${prefix}_${(serial += 1)}`;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Product] });
    await t.post('/api/ExtensibleEnum', { code: 'fixed_status', name: 'Status' }).expect(200);
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const update = gen === 'A' ? 'patch' : 'put';

    const setUpOption = async () => {
      const own = (await t.get("/api/ExtensibleEnum?where[0][type]=equals&where[0][attribute]=code&where[0][value]=fixed_status").expect(200)).body.list[0].id as string;
      const otherCode = unique('other');
      const other = (await t.post('/api/ExtensibleEnum', { code: otherCode, name: 'Other' }).expect(200)).body.id as string;
      const code = unique('opt');
      const option = (await t.post('/api/ExtensibleEnumOption', { code, name: code, extensibleEnumId: own }).expect(200)).body.id as string;
      const product = (await t.post(`${base}/Product`, { name: 'P', statusId: option }).expect(200)).body.id as string;
      return { own, other, otherCode, code, option, product };
    };
    const listOf = async (option: string) => (await t.get(`/api/ExtensibleEnumOption/${option}`).expect(200)).body.extensibleEnumId;

    it('refuses to move an option to another list by an update of the option, on every route', async () => {
      const { own, other, otherCode, option, product } = await setUpOption();
      const answers = [
        await t[update](`${base}/ExtensibleEnumOption/${option}`, { extensibleEnumId: other }),
        await t[update](`${base}/ExtensibleEnumOption/${option}`, { extensibleEnum: { code: otherCode } }),
        await t.post(`${base}/ExtensibleEnumOption/${option}/extensibleEnum`, { id: other }),
      ];
      expect(answers.map((res, i) => ({ i, ...refusal(res) }))).toEqual(answers.map((_, i) => ({ i, ...READ_ONLY })));
      // Emptying the list is the 400 of a required value, as a body judges it before any hook, on every route alike.
      const required = 'Invalid ExtensibleEnumOption: extensibleEnumId is required';
      const emptied = [
        await t[update](`${base}/ExtensibleEnumOption/${option}`, { extensibleEnumId: null }),
        await t.del(`${base}/ExtensibleEnumOption/${option}/extensibleEnum?id=${own}`),
        await t.post(`${base}/entityMassUpdate`, { entityName: 'ExtensibleEnumOption', ids: [option], values: { extensibleEnumId: null } }),
      ];
      expect(emptied.map((res) => [res.status, res.body.error?.code, res.body.error?.message])).toEqual(Array(3).fill([400, 'CORE_VALIDATION_FAILED', required]));
      const [cleared] = (await t.post(`${base}/upsert`, [{ entity: 'ExtensibleEnumOption', payload: { id: option, extensibleEnumId: null } }]).expect(200)).body;
      expect(cleared).toMatchObject({ status: 'Failed', message: required });
      const [item] = (await t.post(`${base}/upsert`, [{ entity: 'ExtensibleEnumOption', payload: { id: option, extensibleEnumId: other } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'Failed', stored: false });
      const mass = (await t.post(`${base}/entityMassUpdate`, { entityName: 'ExtensibleEnumOption', ids: [option], values: { extensibleEnumId: other } }).expect(200)).body;
      expect(mass).toMatchObject({ updated: 0, errors: [{ id: option, code: 'CORE_READ_ONLY_FIELD' }] });
      expect(await listOf(option)).toBe(own);
      expect((await t.get(`${base}/Product/${product}`).expect(200)).body.statusId).toBe(option);
    });

    it('refuses to take an option into another list from the list side, on every route', async () => {
      const { own, other, code, option } = await setUpOption();
      const answers = [
        await t.post(`${base}/ExtensibleEnum/${other}/options`, { id: option }),
        await t.post(`${base}/ExtensibleEnum/${other}/options`, { ids: [option] }),
        await t[update](`${base}/ExtensibleEnum/${other}`, { optionsIds: [option] }),
        await t.post(`${base}/ExtensibleEnum`, { code: unique('stealing'), name: 'Stealing', options: [{ code }] }),
        await t.post(`${base}/ExtensibleEnum`, { code: unique('stealing'), name: 'Stealing', optionsIds: [option] }),
        await t.del(`${base}/ExtensibleEnum/${own}/options?id=${option}`),
      ];
      expect(answers.map((res, i) => ({ i, ...refusal(res) }))).toEqual(answers.map((_, i) => ({ i, ...READ_ONLY })));
      const [item] = (await t.post(`${base}/upsert`, [{ entity: 'ExtensibleEnum', payload: { id: other, optionsIds: [option] } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'Failed', stored: false });
      expect(await listOf(option)).toBe(own);
      expect((await t.get(`/api/ExtensibleEnum/${other}`).expect(200)).body.optionsIds).toEqual([]);
    });

    it('still takes an option write that sends its list back as stored', async () => {
      const { own, option } = await setUpOption();
      const res = await t[update](`${base}/ExtensibleEnumOption/${option}`, { extensibleEnumId: own, color: 'red' }).expect(200);
      expect(res.body).toMatchObject({ extensibleEnumId: own, color: 'red' });
      const read = (await t.get(`${base}/ExtensibleEnum/${own}`).expect(200)).body;
      await t[update](`${base}/ExtensibleEnum/${own}`, read).expect(200);
    });

    it('creates an option and a unit that name their list and measure by a link object (a required link), on a create and an upsert', async () => {
      const code = unique('opt');
      const option = await t.post(`${base}/ExtensibleEnumOption`, { name: 'By object', code, extensibleEnum: { code: 'fixed_status' } }).expect(200);
      const list = (await t.get('/api/ExtensibleEnum?where[0][type]=equals&where[0][attribute]=code&where[0][value]=fixed_status').expect(200)).body.list[0].id as string;
      expect(option.body).toMatchObject({ code, extensibleEnumId: list });
      const [item] = (await t.post(`${base}/upsert`, [{ entity: 'ExtensibleEnumOption', payload: { name: 'Upserted', code: unique('opt'), extensibleEnum: { code: 'fixed_status' } } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'Created', entity: { extensibleEnumId: list } });
      const measureCode = unique('measure');
      const measure = (await t.post('/api/Measure', { name: 'Volume', code: measureCode }).expect(200)).body.id as string;
      const unit = await t.post(`${base}/Unit`, { name: 'l', code: 'l', factor: 1, measure: { code: measureCode } }).expect(200);
      expect(unit.body).toMatchObject({ measureId: measure });
      // still required: no object and no id
      expect(refusal(await t.post(`${base}/Unit`, { name: 'ml', code: 'ml', factor: 0.001 }))).toEqual({ status: 400, code: 'CORE_VALIDATION_FAILED' });
    });

    it('refuses to move a unit to another measure, from either side', async () => {
      const measure = (await t.post('/api/Measure', { name: 'Weight', code: unique('weight') }).expect(200)).body.id as string;
      const otherCode = unique('length');
      const other = (await t.post('/api/Measure', { name: 'Length', code: otherCode }).expect(200)).body.id as string;
      const unit = (await t.post('/api/Unit', { name: 'kg', code: 'kg', measureId: measure, isDefault: true }).expect(200)).body.id as string;
      const attribute = (await t.post('/api/Attribute', { entityType: 'Product', name: 'Weight', code: unique('w'), type: 'float', measureId: measure }).expect(200)).body;
      const product = (await t.post(`${base}/Product`, { name: 'P' }).expect(200)).body.id as string;
      await t.post(`${base}/Product/${product}/upsertAttributeValues`, [{ attributeId: attribute.id, value: 2, valueUnitId: unit }]).expect(200);
      const answers = [
        await t[update](`${base}/Unit/${unit}`, { measureId: other }),
        await t[update](`${base}/Unit/${unit}`, { measure: { code: otherCode } }),
        await t.post(`${base}/Unit/${unit}/measure`, { id: other }),
        await t.post(`${base}/Measure/${other}/units`, { id: unit }),
        await t[update](`${base}/Measure/${other}`, { unitsIds: [unit] }),
        await t.post(`${base}/Measure`, { name: 'Mass', code: unique('mass'), units: [{ code: 'kg' }] }),
      ];
      expect(answers.map((res, i) => ({ i, ...refusal(res) }))).toEqual(answers.map((_, i) => ({ i, ...READ_ONLY })));
      const [item] = (await t.post(`${base}/upsert`, [{ entity: 'Unit', payload: { id: unit, measureId: other } }]).expect(200)).body;
      expect(item).toMatchObject({ status: 'Failed', stored: false });
      expect((await t.get(`/api/Unit/${unit}`).expect(200)).body.measureId).toBe(measure);
      const [value] = (await t.get(`${base}/Product/${product}/attributeValues`).expect(200)).body;
      expect(value).toMatchObject({ value: 2, valueUnitId: unit });
    });
  });
});
