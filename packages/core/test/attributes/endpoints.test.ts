import { GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { createAttribute, createWeight, FLAT, startAttributeApi, unique, userWith } from './support';

describe.each(TEST_DBS)('simple attribute endpoints on %s', (kind) => {
  let t: TestApi;
  let units: { measureId: string; kg: string; g: string };
  let a: Record<string, string>;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    units = await createWeight(t, 'weight');
    a = {
      weight: await createAttribute(t, { code: 'weight', type: 'float', measureId: units.measureId, isRequired: true }),
      title: await createAttribute(t, { code: 'title', type: 'varchar', isMultilang: true }),
      size: await createAttribute(t, { code: 'size', type: 'enum', options: ['S', 'M'] }),
      maker: await createAttribute(t, { code: 'maker', type: 'link', linkEntity: 'Brand' }),
      kept: await createAttribute(t, { code: 'kept', type: 'int', isProtected: true, isReadOnly: true }),
      category: await createAttribute(t, { code: 'depth', type: 'int', entityType: 'Category' }),
    };
  });
  afterAll(() => t.close());

  const newProduct = async (base: string) => (await t.post(`${base}/Product`, { name: unique('P') }).expect(200)).body.id as string;

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it('adds attributes, upserts values and reads them back in the simple form', async () => {
      const id = await newProduct(base);
      expect((await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.size, a.kept] }).expect(200)).body).toBe(true);
      const brand = (await t.post(`${base}/Brand`, { name: unique('Brand') }).expect(200)).body;
      const upserted = await t
        .post(`${base}/Product/${id}/upsertAttributeValues`, [
          { attributeId: a.weight, value: 500, valueUnitId: units.g },
          { attributeId: a.title, value: 'Chair', valueDeDE: 'Stuhl' },
          { attributeId: a.maker, value: brand.id },
        ])
        .expect(200);
      expect(upserted.body).toBe(true);
      const values = (await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body;
      const byId = Object.fromEntries(values.map((v: { attributeId: string }) => [v.attributeId, v]));
      expect(values).toHaveLength(5);
      expect(byId[a.weight]).toEqual({
        attributeId: a.weight,
        attributeValueId: expect.any(String),
        code: 'weight',
        name: 'weight',
        type: 'float',
        value: 500,
        valueUnitId: units.g,
        valueUnitName: 'g',
        required: true,
        visible: true,
        readOnly: false,
        protected: false,
      });
      expect(byId[a.title]).toMatchObject({ type: 'varchar', value: 'Chair', valueDeDE: 'Stuhl' });
      expect(byId[a.maker]).toMatchObject({ type: 'link', value: brand.id, valueName: brand.name });
      expect(byId[a.size]).toMatchObject({ type: 'enum', value: null, required: false });
      expect(byId[a.kept]).toMatchObject({ readOnly: true, protected: true });
      expect(byId[a.size].valueUnitId).toBeUndefined();
      // the same values read flattened
      expect((await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body).toMatchObject({ weight: 500, weightUnitName: 'g', title: 'Chair', size: null });
      // adding an attribute again changes nothing
      await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.weight] }).expect(200);
      expect((await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body.weight).toBe(500);
    });

    it('refuses unknown attributes, attributes of another entity type and bad values, writing nothing', async () => {
      const id = await newProduct(base);
      const unknown = await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.size, 'nope'] }).expect(400);
      expect(unknown.body.error).toMatchObject({ code: 'CORE_VALIDATION_FAILED', details: { issues: [{ path: ['attributeIds', 1], code: 'unknown_attribute' }] } });
      await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.category] }).expect(400);
      await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: 'x' }).expect(400);
      await t.post(`${base}/Product/${id}/addAttributes`, {}).expect(400);
      const bad = await t
        .post(`${base}/Product/${id}/upsertAttributeValues`, [
          { attributeId: a.size, value: 'S' },
          { attributeId: a.weight, value: 'heavy' },
        ])
        .expect(400);
      expect(bad.body.error.details.issues).toEqual([expect.objectContaining({ path: [1, 'value'], code: 'invalid_type' })]);
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.weight, value: 1, valueUnitId: 'nope' }]).expect(400);
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.weight, value: null }]).expect(400);
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.kept, value: 3 }]).expect(400);
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.size, value: 'S', extra: 1 }]).expect(400);
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ value: 'S' }]).expect(400);
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, { attributeId: a.size, value: 'S' }).expect(400);
      expect((await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body).toEqual([]);
      // generation A also takes codes
      const byCode = await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: ['size'] });
      expect(byCode.status).toBe(gen === 'A' ? 200 : 400);
    });

    it('removes attributes, reporting unknown and protected ones', async () => {
      const id = await newProduct(base);
      await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.size, a.kept, a.title] }).expect(200);
      const res = await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [a.size, 'nope', a.kept, a.weight] }).expect(200);
      expect(res.body.count).toBe(1);
      expect(res.body.errors).toEqual([
        { attributeId: 'nope', code: 'CORE_NOT_FOUND', message: expect.stringContaining('nope') },
        { attributeId: a.kept, code: 'CORE_VALIDATION_FAILED', message: expect.stringContaining('protected') },
      ]);
      // The message of a flattened update's refusal (`__attributesToRemove`).
      expect(res.body.errors[1].message).toMatch(/^attribute '.+' is protected and cannot be removed$/);
      const left = (await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body.map((v: { attributeId: string }) => v.attributeId);
      expect(left.sort()).toEqual([a.kept, a.title].sort());
      // the query form, for clients that send no DELETE body
      const byQuery = await t.del(`${base}/Product/${id}/attributeValues?attributeIds=${a.title}`).expect(200);
      expect(byQuery.body).toEqual({ count: 1, errors: [] });
      await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: 'x' }).expect(400);
      // The OpenAPI document offers both forms: the body is optional, the query names attributeIds.
      const removal = (await t.get('/apidocs/openapi.json').expect(200)).body.paths[`${base}/Product/{id}/attributeValues`].delete;
      expect(removal.requestBody).toMatchObject({ required: false });
      expect(removal.parameters.filter((p: { name?: string }) => p.name === 'attributeIds')).toEqual([expect.objectContaining({ in: 'query', required: false, schema: { type: 'string' } })]);
    });

    it('logs what a removal took: the value, each language variant and the unit', async () => {
      const id = await newProduct(base);
      await t
        .post(`${base}/Product/${id}/upsertAttributeValues`, [
          { attributeId: a.weight, value: 3, valueUnitId: units.g },
          { attributeId: a.title, value: 'Oak', valueDeDE: 'Eiche' },
        ])
        .expect(200);
      await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [a.title, a.weight] }).expect(200);
      const [removal] = (await t.get(`/api/v1/Product/${id}/stream`).expect(200)).body.list;
      expect(removal.diff).toEqual({
        title: { was: 'Oak', became: null },
        titleDeDE: { was: 'Eiche', became: null },
        weight: { was: 3, became: null },
        weightUnitId: { was: units.g, became: null },
      });
    });

    it('holds every attribute write to If-Match as an update: another version is 412 and writes nothing', async () => {
      const id = await newProduct(base);
      const stale = (await t.get(`${base}/Product/${id}`).expect(200)).headers.etag as string;
      await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.size] }).expect(200);
      const etag = async () => (await t.get(`${base}/Product/${id}`).expect(200)).headers.etag as string;
      const current = await etag();
      const refused = [
        await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.title] }).set('If-Match', stale),
        await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.size, value: 'M' }]).set('If-Match', stale),
        await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [a.size] }).set('If-Match', stale),
        // removing an attribute the record does not have still checks the version
        await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [a.title] }).set('If-Match', stale),
      ];
      for (const res of refused) expect([res.status, res.body.error?.code]).toEqual([412, 'CORE_PRECONDITION_FAILED']);
      expect(await etag()).toBe(current);
      expect((await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body).toEqual([expect.objectContaining({ attributeId: a.size, value: null })]);
      await t.del(`${base}/Product/${id}/attributeValues`).send({ attributeIds: [a.size] }).set('If-Match', current).expect(200);
      expect((await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body).toEqual([]);
    });

    it('lets concurrent writes of one value end with one value, not a conflict', async () => {
      const id = await newProduct(base);
      const writes = Array.from({ length: 8 }, (_, i) => t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.title, value: `v${i}`, valueDeDE: `d${i}` }]));
      const adds = Array.from({ length: 4 }, () => t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.title, a.size] }));
      expect((await Promise.all([...writes, ...adds])).map((r) => r.status)).toEqual(Array(12).fill(200));
      const values = (await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body;
      expect(values.map((v: { attributeId: string }) => v.attributeId).sort()).toEqual([a.size, a.title].sort());
      expect(values.find((v: { attributeId: string }) => v.attributeId === a.title).value).toMatch(/^v\d$/);
    });

    it('answers 404 for an unknown record or an entity type without attributes', async () => {
      for (const path of ['/Product/nope/attributeValues', '/Brand/x/attributeValues', '/Nope/x/attributeValues']) {
        expect((await t.get(`${base}${path}`).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
      }
      await t.post(`${base}/Product/nope/addAttributes`, { attributeIds: [a.size] }).expect(404);
      await t.post(`${base}/Product/nope/upsertAttributeValues`, []).expect(404);
      await t.del(`${base}/Product/nope/attributeValues`).send({ attributeIds: [] }).expect(404);
    });

    it('needs read on the record to read values and edit to change them', async () => {
      const id = await newProduct(base);
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.size, value: 'S' }]).expect(200);
      const reader = await userWith(t, { Product: { read: 'all', edit: 'no' } });
      expect((await reader.get(`${base}/Product/${id}/attributeValues`).expect(200)).body[0].value).toBe('S');
      expect((await reader.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body.size).toBe('S');
      await reader.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.title] }).expect(403);
      await reader.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.size, value: 'M' }]).expect(403);
      await reader.del(`${base}/Product/${id}/attributeValues`, { attributeIds: [a.size] }).expect(403);
      await reader.patch(`${base}/Product/${id}`, { size: 'M' }).set(FLAT).expect(403);
      const stranger = await userWith(t, { Brand: { read: 'all' } });
      await stranger.get(`${base}/Product/${id}/attributeValues`).expect(403);
      const owner = await userWith(t, { Product: { read: 'own', edit: 'own', create: true } });
      await owner.get(`${base}/Product/${id}/attributeValues`).expect(404);
      await owner.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.size, value: 'M' }]).expect(404);
      const mine = (await owner.post(`${base}/Product`, { name: unique('Mine') }).expect(200)).body.id;
      await owner.post(`${base}/Product/${mine}/upsertAttributeValues`, [{ attributeId: a.size, value: 'M' }]).expect(200);
      const ownEditor = await userWith(t, { Product: { read: 'all', edit: 'own', create: true } });
      await ownEditor.post(`${base}/Product/${id}/addAttributes`, { attributeIds: [a.title] }).expect(403);
      await ownEditor.patch(`${base}/Product/${id}`, { name: unique('Not mine') }).expect(403);
      const ownId = (await ownEditor.post(`${base}/Product`, { name: unique('Own') }).expect(200)).body.id;
      await ownEditor.post(`${base}/Product/${ownId}/addAttributes`, { attributeIds: [a.title] }).expect(200);
      await ownEditor.patch(`${base}/Product/${ownId}`, { name: unique('Still mine') }).expect(200);
      expect((await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body[0].value).toBe('S');
    });
  });
});
