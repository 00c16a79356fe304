import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, createWeight, FLAT, startAttributeApi, unique } from './support';

describe.each(TEST_DBS)('writing attributes with records on %s', (kind) => {
  let t: TestApi;
  let units: { measureId: string; kg: string; g: string };
  let other: { measureId: string; kg: string };
  let a: Record<string, string>;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    units = await createWeight(t, 'weight');
    other = await createWeight(t, 'load');
    a = {
      color: await createAttribute(t, { code: 'shade', type: 'varchar', isMultilang: true }),
      weight: await createAttribute(t, { code: 'weight', type: 'float', measureId: units.measureId, min: 0 }),
      pieces: await createAttribute(t, { code: 'pieces', type: 'int', max: 100 }),
      size: await createAttribute(t, { code: 'size', type: 'enum', options: ['S', 'M', 'L'] }),
      made: await createAttribute(t, { code: 'made', type: 'date' }),
      checked: await createAttribute(t, { code: 'checked', type: 'datetime' }),
      eco: await createAttribute(t, { code: 'eco', type: 'bool' }),
      maker: await createAttribute(t, { code: 'maker', type: 'link', linkEntity: 'Brand' }),
      sellers: await createAttribute(t, { code: 'sellers', type: 'linkMultiple', linkEntity: 'Brand' }),
      locked: await createAttribute(t, { code: 'locked', type: 'varchar', isReadOnly: true }),
      needed: await createAttribute(t, { code: 'needed', type: 'varchar', isRequired: true }),
      kept: await createAttribute(t, { code: 'kept', type: 'varchar', isProtected: true }),
    };
  });
  afterAll(() => t.close());

  const newProduct = async (base: string) => (await t.post(`${base}/Product`, { name: unique('P') }).expect(200)).body.id as string;
  const valuesOf = async (id: string) => (await t.get(`/api/Product/${id}`).set(FLAT).expect(200)).body;

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('sets values of every type by their virtual fields and leaves the others unchanged', async () => {
      const id = await newProduct(base);
      const brand = (await t.post(`${base}/Brand`, { name: unique('Brand') }).expect(200)).body.id;
      const body = {
        shade: 'red', shadeDeDE: 'rot', weight: 1.25, pieces: 4, size: 'M', made: '2024-02-29', checked: '2024-03-01T10:00:00+02:00', eco: true,
        makerId: brand, sellersIds: [brand],
      };
      const res = await t.patch(`${base}/Product/${id}`, body).set(FLAT).expect(200);
      expect(res.body).toMatchObject({ ...body, checked: '2024-03-01 08:00:00', weightUnitId: units.kg, weightUnitName: 'kg' });
      const before = (await t.get(`${base}/Product/${id}`).expect(200)).body.modifiedAt;
      const again = await t.patch(`${base}/Product/${id}`, { pieces: 5, weightUnitId: units.g }).set(FLAT).expect(200);
      expect(again.body).toMatchObject({ shade: 'red', pieces: 5, weight: 1.25, weightUnitName: 'g' });
      expect(again.body.size).toBe('M');
      expect(again.body.modifiedAt >= before).toBe(true);
      // clearing a value keeps the attribute on the record
      const cleared = await t.patch(`${base}/Product/${id}`, { pieces: null, sellersIds: [] }).set(FLAT).expect(200);
      expect(cleared.body).toMatchObject({ pieces: null, sellersIds: [], sellersNames: {} });
      expect(cleared.body.attributesDefs.pieces).toBeDefined();
    });

    it('creates a record with attribute values', async () => {
      const res = await t.post(`${base}/Product`, { name: unique('Created'), weight: 3, size: 'L' }).set(FLAT).expect(200);
      expect(res.body).toMatchObject({ weight: 3, weightUnitName: 'kg', size: 'L' });
      expect(await valuesOf(res.body.id)).toMatchObject({ weight: 3, size: 'L' });
    });

    it('refuses bad values with 400 and stores nothing of the request', async () => {
      const id = await newProduct(base);
      await t.patch(`${base}/Product/${id}`, { pieces: 1, mpn: 'before' }).set(FLAT).expect(200);
      const cases: [Record<string, unknown>, string][] = [
        [{ pieces: 1.5 }, 'invalid_type'],
        [{ pieces: 101 }, 'too_big'],
        [{ weight: -1 }, 'too_small'],
        [{ weight: 'heavy' }, 'invalid_type'],
        [{ size: 'XL' }, 'invalid_enum_value'],
        [{ made: '2023-02-29' }, 'invalid_format'],
        [{ made: '0000-12-31' }, 'invalid_format'],
        [{ checked: '9999-12-31T23:30:00-01:00' }, 'invalid_format'],
        [{ checked: 'yesterday' }, 'invalid_format'],
        [{ eco: 'yes' }, 'invalid_type'],
        [{ makerId: 'not a valid id!' }, 'invalid_format'],
        [{ sellersIds: 'x' }, 'invalid_type'],
        [{ shade: 'x'.repeat(256) }, 'too_long'],
        [{ shade: '😀'.repeat(256) }, 'too_long'],
        [{ weightUnitId: other.kg }, 'invalid_unit'],
        [{ pieces: 2, weightUnitId: 'nope' }, 'invalid_unit'],
        [{ needed: '' }, 'required'],
      ];
      for (const [change, code] of cases) {
        const res = await t.patch(`${base}/Product/${id}`, { mpn: 'after', ...change }).set(FLAT);
        expect({ change, status: res.status, codes: res.body.error?.details?.issues?.map((i: { code: string }) => i.code) }).toEqual({ change, status: 400, codes: [code] });
      }
      // Characters are counted as for fields: 255 emoji (510 UTF-16 units) fit.
      const emoji = '😀'.repeat(255);
      expect((await t.post(`${base}/Product`, { name: emoji, shade: emoji }).set(FLAT).expect(200)).body).toMatchObject({ name: emoji, shade: emoji });
      const missing = await t.patch(`${base}/Product/${id}`, { mpn: 'after', makerId: 'no-such-brand' }).set(FLAT).expect(400);
      expect(missing.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', details: { entity: 'Brand', field: 'makerId' } });
      expect(await valuesOf(id)).toMatchObject({ mpn: 'before', pieces: 1 });
    });

    it('checks the unit of every value against its own measure, also when one unit is sent for several attributes', async () => {
      const load = unique('load');
      await createAttribute(t, { code: load, type: 'float', measureId: other.measureId });
      const id = await newProduct(base);
      await t.patch(`${base}/Product/${id}`, { weight: 1, [load]: 1 }).set(FLAT).expect(200);
      // other.kg is a unit of load's measure only: weight may not take it, whichever key comes first
      const flat = await t.patch(`${base}/Product/${id}`, { weight: 2, weightUnitId: other.kg, [load]: 2, [`${load}UnitId`]: other.kg }).set(FLAT).expect(400);
      expect(flat.body.error.details.issues).toEqual([expect.objectContaining({ path: ['weightUnitId'], code: 'invalid_unit' })]);
      const attributeIds = [a.weight, (await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body.find((v: { code: string }) => v.code === load).attributeId];
      const items = attributeIds.map((attributeId) => ({ attributeId, value: 3, valueUnitId: other.kg }));
      const endpoint = await t.post(`${base}/Product/${id}/upsertAttributeValues`, items).expect(400);
      expect(endpoint.body.error.details.issues).toEqual([expect.objectContaining({ path: [0, 'valueUnitId'], code: 'invalid_unit' })]);
      const upsert = await t.post(`${base}/upsert`, [{ entity: 'Product', payload: { id, weight: 4, weightUnitId: other.kg, [load]: 4, [`${load}UnitId`]: other.kg } }]).set(FLAT).expect(200);
      expect(upsert.body[0]).toMatchObject({ status: 'Failed', stored: false });
      expect(await valuesOf(id)).toMatchObject({ weight: 1, weightUnitId: units.kg, [load]: 1, [`${load}UnitId`]: other.kg });
    });

    it('answers 400 for keys that are no attribute, and for attribute keys without the header', async () => {
      const id = await newProduct(base);
      const unknown = await t.patch(`${base}/Product/${id}`, { nope: 1 }).set(FLAT).expect(400);
      expect(unknown.body.error.code).toBe('CORE_UNKNOWN_FIELD');
      await t.patch(`${base}/Product/${id}`, { weight: 1 }).expect(400);
      await t.patch(`${base}/Product/${id}`, { __attributes: [a.weight] }).expect(400);
      // an entity type without attributes knows no attribute keys
      const brand = (await t.post(`${base}/Brand`, { name: unique('B') }).expect(200)).body.id;
      await t.patch(`${base}/Brand/${brand}`, { weight: 1 }).set(FLAT).expect(400);
      // derived keys sent back from a read are accepted and ignored
      const read = (await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body;
      await t.patch(`${base}/Product/${id}`, { ...read, weightUnitName: 'x', attributesDefs: {} }).set(FLAT).expect(200);
    });

    it('keeps read-only values and required values, and refuses to remove protected attributes', async () => {
      const id = await newProduct(base);
      const locked = await t.patch(`${base}/Product/${id}`, { locked: 'x' }).set(FLAT).expect(400);
      expect(locked.body.error.code).toBe('CORE_READ_ONLY_FIELD');
      await t.patch(`${base}/Product/${id}`, { locked: null, __attributes: [a.locked, a.kept] }).set(FLAT).expect(200);
      await t.patch(`${base}/Product/${id}`, { needed: 'yes' }).set(FLAT).expect(200);
      await t.patch(`${base}/Product/${id}`, { needed: null }).set(FLAT).expect(400);
      if (gen === 'B') {
        const res = await t.patch(`${base}/Product/${id}`, { __attributesToRemove: [a.kept] }).set(FLAT).expect(400);
        expect(res.body.error.details.issues[0].code).toBe('protected');
        expect(res.body.error.message).toMatch(/^attribute '.+' is protected and cannot be removed$/);
      }
      expect(await valuesOf(id)).toMatchObject({ locked: null, needed: 'yes', kept: null });
    });

    it('assigns attributes with __attributes (generation A: ids or codes)', async () => {
      const id = await newProduct(base);
      const names = gen === 'A' ? [a.eco, 'size'] : [a.eco, a.size];
      const res = await t.patch(`${base}/Product/${id}`, { __attributes: names, pieces: 9 }).set(FLAT).expect(200);
      expect(res.body).toMatchObject({ eco: null, size: null, pieces: 9 });
      if (gen === 'B') {
        const byCode = await t.patch(`${base}/Product/${id}`, { __attributes: ['made'] }).set(FLAT).expect(400);
        expect(byCode.body.error.details.issues[0]).toMatchObject({ path: ['__attributes', 0], code: 'unknown_attribute' });
      }
      await t.patch(`${base}/Product/${id}`, { __attributes: 'eco' }).set(FLAT).expect(400);
    });

    it('removes attributes with __attributesToRemove in generation B only', async () => {
      const id = await newProduct(base);
      await t.patch(`${base}/Product/${id}`, { eco: false, pieces: 1 }).set(FLAT).expect(200);
      const res = await t.patch(`${base}/Product/${id}`, { __attributesToRemove: [a.eco] }).set(FLAT);
      if (gen === 'A') {
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'CORE_UNKNOWN_FIELD', details: { issues: [{ path: ['__attributesToRemove'] }] } });
        expect(await valuesOf(id)).toMatchObject({ eco: false });
      } else {
        expect(res.status).toBe(200);
        expect(res.body.eco).toBeUndefined();
        expect(res.body.pieces).toBe(1);
        await t.patch(`${base}/Product/${id}`, { __attributesToRemove: [a.pieces], pieces: 2 }).set(FLAT).expect(400);
      }
    });

    it('finds or creates the record a link object names in a single-link attribute (generation A only)', async () => {
      const id = await newProduct(base);
      const name = unique('Maker');
      const res = await t.patch(`${base}/Product/${id}`, { maker: { name } }).set(FLAT);
      if (gen === 'B') {
        expect(res.status).toBe(400);
        expect((await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=${name}`).expect(200)).body.total).toBe(0);
        return;
      }
      expect(res.status).toBe(200);
      expect(res.body.makerName).toBe(name);
      const again = await t.patch(`${base}/Product/${await newProduct(base)}`, { maker: { name } }).set(FLAT).expect(200);
      expect(again.body.makerId).toBe(res.body.makerId);
      await t.patch(`${base}/Product/${id}`, { maker: { name: 'x', nested: { a: 1 } } }).set(FLAT).expect(400);
      await t.patch(`${base}/Product/${id}`, { sellers: [{ name: 'x' }] }).set(FLAT).expect(400);
      // a failing write creates no linked record either
      const lost = unique('Lost');
      await t.patch(`${base}/Product/${id}`, { maker: { name: lost }, pieces: 1000 }).set(FLAT).expect(400);
      expect((await t.get(`${base}/Brand?where[0][type]=equals&where[0][attribute]=name&where[0][value]=${lost}`).expect(200)).body.total).toBe(0);
    });

    it('gives upsert results no attributes', async () => {
      const id = await newProduct(base);
      await t.patch(`${base}/Product/${id}`, { weight: 2 }).set(FLAT).expect(200);
      const res = await t.post(`${base}/upsert`, [{ entity: 'Product', payload: { id, mpn: 'U' } }]).set(FLAT).expect(200);
      expect(res.body[0].status).toBe('Updated');
      expect(res.body[0].entity.weight).toBeUndefined();
      expect(res.body[0].entity.attributesDefs).toBeUndefined();
    });
  });

  it('drops the values of a record or an attribute removed for good, and hides those of a deleted attribute', async () => {
    const id = await newProduct('/api');
    const gone = await createAttribute(t, { code: unique('gone'), type: 'int' });
    await t.post(`/api/Product/${id}/upsertAttributeValues`, [{ attributeId: gone, value: 1 }, { attributeId: a.pieces, value: 2 }]).expect(200);
    await t.del(`/api/Attribute/${gone}`).expect(200);
    expect((await t.get(`/api/Product/${id}/attributeValues`).expect(200)).body.map((v: { attributeId: string }) => v.attributeId)).toEqual([a.pieces]);
    await t.post('/api/entityRestore', { entityName: 'Attribute', ids: [gone] }).expect(200);
    expect((await t.get(`/api/Product/${id}/attributeValues`).expect(200)).body).toHaveLength(2);
    const table = 'product__attribute_value';
    const count = async (column: string, value: string) => Number((await t.api.database.knex(table).where(column, value).count({ n: '*' }))[0].n);
    await t.del(`/api/Attribute/${gone}`).set('permanently', 'true').expect(200);
    expect(await count('attribute_id', gone)).toBe(0);
    await t.del(`/api/Product/${id}`).set('permanently', 'true').expect(200);
    expect(await count('record_id', id)).toBe(0);
  });
});
