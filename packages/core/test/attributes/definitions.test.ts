import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, createWeight, startAttributeApi, unique, userWith } from './support';

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
  });

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('checks the code pattern and keeps codes unique per entity type (409)', async () => {
      for (const code of ['Weight', '1st', 'with-dash', 'with space', '_x']) {
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
