import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, createWeight, FLAT, startAttributeApi, unique, userWith } from './support';

describe.each(TEST_DBS)('Attribute, Measure and Unit on %s', (kind) => {
  let t: TestApi;
  let measureId: string;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    measureId = (await createWeight(t, 'mass')).measureId;
  });
  afterAll(() => t.close());

  const issueCodes = (body: { error: { details: { issues: { path: unknown[]; code: string }[] } } }) =>
    body.error.details.issues.map((i) => [i.path[0], i.code]);

  it('requires a code through generation A and not through generation B', async () => {
    const a = await t.post('/api/Attribute', { name: 'No code', type: 'varchar', entityType: 'Product' }).expect(400);
    expect(a.body.error.code).toBe('CORE_VALIDATION_FAILED');
    expect(issueCodes(a.body)).toEqual([['code', 'required']]);
    const b = await t.post('/api/v1/Attribute', { name: 'No code', type: 'varchar', entityType: 'Product' }).expect(200);
    expect(b.body.code).toBeNull();
    // Clearing the code through A is refused; through B it is not asked for.
    const withCode = await createAttribute(t, { code: unique('clear'), type: 'int' });
    await t.patch(`/api/Attribute/${withCode}`, { code: null }).expect(400);
    await t.patch(`/api/v1/Attribute/${b.body.id}`, { name: 'Still no code' }).expect(200);
    // An attribute without code, read and sent back through A as it is (code: null), is no clearing
    const read = (await t.get(`/api/Attribute/${b.body.id}`).expect(200)).body;
    expect((await t.patch(`/api/Attribute/${b.body.id}`, { ...read, name: 'Sent back' }).expect(200)).body).toMatchObject({ code: null, name: 'Sent back' });
    expect((await t.put(`/api/Attribute/${b.body.id}`, { ...read, name: 'Put back' }).expect(200)).body).toMatchObject({ code: null, name: 'Put back' });
    const upsert = await t.post('/api/upsert', [{ entity: 'Attribute', payload: { ...read, name: 'Upserted' } }]).expect(200);
    expect(upsert.body[0]).toMatchObject({ status: 'Updated', entity: { code: null, name: 'Upserted' } });
    // ... while giving it a code through A still checks it
    expect(issueCodes((await t.patch(`/api/Attribute/${b.body.id}`, { code: 'Bad' }).expect(400)).body)).toEqual([['code', 'invalid_format']]);
    await t.patch(`/api/Attribute/${b.body.id}`, { code: unique('given') }).expect(200);
    await t.patch(`/api/Attribute/${b.body.id}`, { code: null }).expect(400);
  });

  it('refuses an attribute keyed by its id when the id is a key of the flattened update (__attributes, __attributesToRemove)', async () => {
    for (const id of ['__attributes', '__attributesToRemove']) {
      const res = await t.post('/api/v1/Attribute', { id, name: 'Reserved', type: 'varchar', entityType: 'Product' });
      expect({ id, status: res.status }).toEqual({ id, status: 400 });
      expect(issueCodes(res.body)).toEqual([['id', 'taken']]);
      const upsert = await t.post('/api/v1/MassActions/action/upsert', [{ entity: 'Attribute', payload: { id, name: 'Reserved', type: 'varchar', entityType: 'Product' } }]).expect(200);
      expect(upsert.body[0]).toMatchObject({ status: 'Failed', stored: false });
      await t.get(`/api/v1/Attribute/${id}`).expect(404);
    }
    // ... while such an id with a code of its own keys the attribute by the code
    const code = unique('keyed');
    await t.post('/api/v1/Attribute', { id: `__${code}`, code, name: 'Coded', type: 'varchar', entityType: 'Product' }).expect(200);
  });

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('checks the code pattern and keeps codes unique per entity type (409)', async () => {
      for (const code of ['Weight', '1st', 'with-dash', 'with space', '_x', '']) {
        const res = await t.post(`${base}/Attribute`, { code, type: 'varchar', entityType: 'Product' }).expect(400);
        expect(issueCodes(res.body)).toEqual([['code', 'invalid_format']]);
      }
      const code = unique('gtin');
      await t.post(`${base}/Attribute`, { code, type: 'varchar', entityType: 'Product' }).expect(200);
      const dup = await t.post(`${base}/Attribute`, { code, type: 'int', entityType: 'Product' }).expect(409);
      expect(dup.body.error).toMatchObject({ code: 'CORE_UNIQUE_VIOLATION', details: { fields: ['entityType', 'code'] } });
      await t.post(`${base}/Attribute`, { code, type: 'varchar', entityType: 'Category' }).expect(200);
    });

    it('refuses codes whose virtual fields would clash with fields of the entity type', async () => {
      for (const [code, type] of [['sku', 'varchar'], ['brand', 'link'], ['categoriesIds', 'int'], ['attributesDefs', 'int']]) {
        const res = await t.post(`${base}/Attribute`, { code, type, entityType: 'Product', linkEntity: 'Brand' });
        expect({ code, status: res.status }).toEqual({ code, status: 400 });
      }
    });

    it('refuses an empty code on create and update; no code (absent or null) keys the attribute by its id', async () => {
      const empty = await t.post(`${base}/Attribute`, { name: 'e', code: '', type: 'varchar', entityType: 'Product' }).expect(400);
      expect(empty.body.error.code).toBe('CORE_VALIDATION_FAILED');
      expect(issueCodes(empty.body)).toEqual([['code', 'invalid_format']]);
      const id = await createAttribute(t, { code: unique('filled'), type: 'varchar' });
      expect(issueCodes((await t.patch(`${base}/Attribute/${id}`, { code: '' }).expect(400)).body)).toEqual([['code', 'invalid_format']]);
      const keyless = (await t.post('/api/v1/Attribute', { name: 'keyless', code: null, type: 'int', entityType: 'Product' }).expect(200)).body;
      expect(keyless.code).toBeNull();
      const p = (await t.post(`${base}/Product`, { name: unique('keyless') }).expect(200)).body.id;
      const written = (await t.patch(`${base}/Product/${p}`, { [keyless.id]: 3 }).set(FLAT).expect(200)).body;
      expect(written[keyless.id]).toBe(3);
      expect(Object.keys(written.attributesDefs)).toEqual([keyless.id]);
    });

    it('refuses a key or virtual field that another attribute of the entity type already shows (400, naming it)', async () => {
      const refused = async (body: Record<string, unknown>, clash: string, path = 'code') => {
        const res = await t.post(`${base}/Attribute`, { entityType: 'Product', ...body });
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.error.code).toBe('CORE_VALIDATION_FAILED');
        expect(issueCodes(res.body)).toEqual([[path, 'taken']]);
        expect(res.body.error.message).toContain(clash);
      };
      const w = unique('w');
      const weight = await createAttribute(t, { code: w, type: 'float', measureId });
      await refused({ code: `${w}UnitId`, type: 'varchar' }, `${w}UnitId`);
      await refused({ code: `${w}UnitName`, type: 'int' }, `${w}UnitName`);
      // ... the other way round: the new attribute's unit fields would be another's key
      const m = unique('m');
      await createAttribute(t, { code: `${m}UnitName`, type: 'varchar' });
      await refused({ code: m, type: 'int', measureId }, `${m}UnitName`);
      await createAttribute(t, { code: m, type: 'int' }); // without measure it has no unit fields
      // multilingual variants and link fields
      const title = unique('title');
      await createAttribute(t, { code: title, type: 'varchar', isMultilang: true });
      await refused({ code: `${title}DeDE`, type: 'varchar' }, `${title}DeDE`);
      const maker = unique('maker');
      await createAttribute(t, { code: maker, type: 'link', linkEntity: 'Brand' });
      await refused({ code: `${maker}Id`, type: 'varchar' }, `${maker}Id`);
      await refused({ code: `${maker}Name`, type: 'varchar' }, `${maker}Name`);
      // codes are case-sensitive, other entity types have their own keys
      await createAttribute(t, { code: `${w}unitId`, type: 'varchar' });
      await createAttribute(t, { code: `${w}UnitId`, type: 'varchar', entityType: 'Category' });
      // an attribute without code is keyed by its id
      const zX = unique('zX');
      await t.post('/api/v1/Attribute', { id: zX, name: 'by id', type: 'int', entityType: 'Product' }).expect(200);
      await refused({ code: zX, type: 'varchar' }, zX);
      const yY = unique('yY');
      await createAttribute(t, { code: yY, type: 'varchar' });
      const res = await t.post('/api/v1/Attribute', { id: yY, name: 'by id', type: 'int', entityType: 'Product' }).expect(400);
      expect(issueCodes(res.body)).toEqual([['id', 'taken']]);
      await t.post('/api/v1/Attribute', { id: yY, code: unique('coded'), type: 'int', entityType: 'Product' }).expect(200);
      const sku = await t.post('/api/v1/Attribute', { id: unique('sku'), type: 'int', entityType: 'Product' });
      expect(sku.status).toBe(200); // 'sku12' is no field; 'sku' itself is
      expect((await t.post('/api/v1/Attribute', { id: 'sku', type: 'int', entityType: 'Product' }).expect(400)).body.error.code).toBe('CORE_VALIDATION_FAILED');
      // a soft-deleted attribute frees its names
      await t.del(`${base}/Attribute/${weight}`).expect(200);
      await createAttribute(t, { code: `${w}UnitId`, type: 'varchar' });
    });

    it('refuses an update that would make an attribute clash with another one', async () => {
      const plain = unique('plain');
      const id = await createAttribute(t, { code: plain, type: 'varchar' });
      await createAttribute(t, { code: `${plain}DeDE`, type: 'varchar' });
      const multilang = await t.patch(`${base}/Attribute/${id}`, { isMultilang: true }).expect(400);
      expect(issueCodes(multilang.body)).toEqual([['code', 'taken']]);
      expect(multilang.body.error.message).toContain(`${plain}DeDE`);
      const w = unique('w');
      await createAttribute(t, { code: w, type: 'float', measureId });
      const renamed = await t.patch(`${base}/Attribute/${id}`, { code: `${w}UnitId` }).expect(400);
      expect(issueCodes(renamed.body)).toEqual([['code', 'taken']]);
      // unchanged names, or names of its own, are fine
      await t.patch(`${base}/Attribute/${id}`, { name: 'Renamed', code: plain }).expect(200);
      const own = await createAttribute(t, { code: unique('own'), type: 'varchar', isMultilang: true });
      await t.patch(`${base}/Attribute/${own}`, { isMultilang: false }).expect(200);
      await t.patch(`${base}/Attribute/${own}`, { isMultilang: true }).expect(200);
    });

    it('refuses to restore an attribute whose keys another attribute took meanwhile (restored 0, nothing changes)', async () => {
      const restore = (id: string) => t.post(`${base}/entityRestore`, { entityName: 'Attribute', ids: [id] }).expect(200);
      const w = unique('w');
      const weight = await createAttribute(t, { code: w, type: 'float', measureId });
      await t.del(`${base}/Attribute/${weight}`).expect(200);
      const unitKey = await createAttribute(t, { code: `${w}UnitId`, type: 'varchar' });
      const title = unique('title');
      const multilang = await createAttribute(t, { code: title, type: 'varchar', isMultilang: true });
      await t.del(`${base}/Attribute/${multilang}`).expect(200);
      await createAttribute(t, { code: `${title}DeDE`, type: 'varchar' });
      for (const [id, clash] of [[weight, `${w}UnitId`], [multilang, `${title}DeDE`]]) {
        const res = await restore(id);
        expect(res.body).toEqual({ restored: 0, errors: [{ id, code: 'CORE_VALIDATION_FAILED', message: expect.stringContaining(clash) }] });
        await t.get(`${base}/Attribute/${id}`).expect(404);
      }
      // once the other one is gone, it comes back
      await t.del(`${base}/Attribute/${unitKey}`).expect(200);
      expect((await restore(weight)).body).toEqual({ restored: 1, errors: [] });
      expect((await t.get(`${base}/Attribute/${weight}`).expect(200)).body.code).toBe(w);
    });

    it('checks the options of each type', async () => {
      const bad = async (body: Record<string, unknown>, path: string, code: string) => {
        const res = await t.post(`${base}/Attribute`, { code: unique('x'), entityType: 'Product', ...body }).expect(400);
        expect(issueCodes(res.body)).toContainEqual([path, code]);
      };
      await bad({ type: 'varchar', entityType: 'Brand' }, 'entityType', 'invalid_entity');
      await bad({ type: 'varchar', entityType: 'Nope' }, 'entityType', 'invalid_entity');
      await bad({ type: 'enum' }, 'options', 'required');
      await bad({ type: 'varchar', options: ['a'] }, 'options', 'not_allowed');
      await bad({ type: 'link' }, 'linkEntity', 'invalid_entity');
      await bad({ type: 'link', linkEntity: 'Nope' }, 'linkEntity', 'invalid_entity');
      await bad({ type: 'int', linkEntity: 'Brand' }, 'linkEntity', 'not_allowed');
      await bad({ type: 'varchar', measureId }, 'measureId', 'not_allowed');
      await bad({ type: 'int', isMultilang: true }, 'isMultilang', 'not_allowed');
      await bad({ type: 'bool', min: 1 }, 'min', 'not_allowed');
      await bad({ type: 'int', min: 5, max: 1 }, 'min', 'too_big');
      const unknownMeasure = await t.post(`${base}/Attribute`, { code: unique('x'), entityType: 'Product', type: 'float', measureId: 'nope' }).expect(400);
      expect(unknownMeasure.body.error.code).toBe('CORE_INVALID_LINK');
    });

    it('keeps type, entity type, linked entity and measure once created', async () => {
      const id = await createAttribute(t, { code: unique('fixed'), type: 'float', measureId });
      for (const change of [{ type: 'int' }, { entityType: 'Category' }, { measureId: null }, { linkEntity: 'Brand' }]) {
        const res = await t.patch(`${base}/Attribute/${id}`, change).expect(400);
        expect(issueCodes(res.body)).toContainEqual([Object.keys(change)[0], 'read_only']);
      }
      // sending them back unchanged is fine
      const read = (await t.get(`${base}/Attribute/${id}`).expect(200)).body;
      const updated = await t.patch(`${base}/Attribute/${id}`, { ...read, name: 'Renamed' }).expect(200);
      expect(updated.body).toMatchObject({ name: 'Renamed', type: 'float', measureId, isRequired: false, isMultilang: false });
    });

    it('keeps the measure also when it is named by its link (null or an object to find or create), on every write', async () => {
      const other = unique('volume');
      const id = await createAttribute(t, { code: unique('fixedMeasure'), type: 'float', measureId });
      const refused = (res: { status: number; body: { error?: { code: string; details: { issues: { path: unknown[]; code: string }[] } } } }) => {
        expect(res.status).toBe(400);
        expect(issueCodes(res.body as never)).toContainEqual(['measure', 'read_only']);
      };
      for (const measure of [null, { code: other, name: 'Volume' }]) {
        refused(await t.patch(`${base}/Attribute/${id}`, { measure }));
        refused(await t.put(`${base}/Attribute/${id}`, { measure }));
        const mass = await t.post(`${base}/entityMassUpdate`, { entityName: 'Attribute', ids: [id], values: { measure } }).expect(200);
        expect(mass.body).toMatchObject({ updated: 0, errors: [{ id, code: 'CORE_VALIDATION_FAILED' }] });
        const upsert = await t.post(`${base}/upsert`, [{ entity: 'Attribute', payload: { id, measure } }]).expect(200);
        expect(upsert.body[0]).toMatchObject({ status: 'Failed', stored: false });
        expect(upsert.body[0].message).toContain('measure cannot be changed');
      }
      expect((await t.get(`${base}/Attribute/${id}`).expect(200)).body.measureId).toBe(measureId);
      // no measure was made for the refused objects
      expect((await t.get(`${base}/Measure?where[0][type]=equals&where[0][attribute]=code&where[0][value]=${other}`).expect(200)).body.total).toBe(0);
      // an attribute without a unit takes no measure, however it is named; on create a link object is fine
      const varchar = await t.post(`${base}/Attribute`, { code: unique('noMeasure'), type: 'varchar', entityType: 'Product', measure: { code: 'mass' } }).expect(400);
      expect(issueCodes(varchar.body)).toEqual([['measure', 'not_allowed']]);
      const found = await t.post(`${base}/Attribute`, { code: unique('byObject'), type: 'int', entityType: 'Product', measure: { code: 'mass' } }).expect(200);
      expect(found.body.measureId).toBe(measureId);
      const without = await createAttribute(t, { code: unique('noMeasureYet'), type: 'int' });
      await t.patch(`${base}/Attribute/${without}`, { measure: null }).expect(200);
    });

    it('manages measures and units through the ordinary record routes, with roles', async () => {
      const code = unique('length');
      const measure = (await t.post(`${base}/Measure`, { name: 'Length', code }).expect(200)).body;
      const unit = (await t.post(`${base}/Unit`, { name: 'metre', code: 'm', measureId: measure.id, isDefault: true }).expect(200)).body;
      expect(unit).toMatchObject({ measureId: measure.id, measureName: 'Length', factor: 1, isDefault: true });
      await t.post(`${base}/Unit`, { name: 'again', code: 'm', measureId: measure.id }).expect(409);
      const units = (await t.get(`${base}/Measure/${measure.id}`).expect(200)).body;
      expect(units.unitsIds).toEqual([unit.id]);
      const reader = await userWith(t, { Attribute: { read: 'all' }, Measure: { read: 'all' } });
      await reader.get(`${base}/Attribute`).expect(200);
      await reader.get(`${base}/Unit`).expect(403);
      await reader.post(`${base}/Attribute`, { code: unique('x'), type: 'int', entityType: 'Product' }).expect(403);
      await reader.post(`${base}/Measure`, { name: 'x' }).expect(403);
    });
  });

  it('says which entity types have attributes in the metadata', async () => {
    const meta = (await t.get('/api/metadata').expect(200)).body;
    expect(meta.scopes.Product.hasAttributes).toBe(true);
    expect(meta.scopes.Brand.hasAttributes).toBe(false);
    expect(Object.keys(meta.entityDefs)).toEqual(expect.arrayContaining(['Attribute', 'Measure', 'Unit']));
    expect(meta.entityDefs.Attribute.fields.type.options).toContain('linkMultiple');
  });
});
