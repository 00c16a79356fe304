import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { attributeEntities, createAttribute, createWeight, FLAT, LANGUAGES, startAttributeApi, unique } from './support';

describe.each(TEST_DBS)('reading attributes on %s', (kind) => {
  let t: TestApi;
  let units: { measureId: string; kg: string; g: string };
  let a: Record<string, string>;
  let brand: { id: string; name: string };
  let product: string;
  let bare: string;
  beforeAll(async () => {
    t = await startAttributeApi(kind);
    units = await createWeight(t, 'weight');
    brand = (await t.post('/api/Brand', { name: 'Acme' }).expect(200)).body;
    const other = (await t.post('/api/Brand', { name: 'Globex' }).expect(200)).body;
    a = {
      material: await createAttribute(t, { code: 'material', type: 'varchar', isMultilang: true, name: 'Material' }),
      weight: await createAttribute(t, { code: 'weight', type: 'float', measureId: units.measureId, name: 'Weight' }),
      notes: await createAttribute(t, { code: 'notes', type: 'text' }),
      maker: await createAttribute(t, { code: 'maker', type: 'link', linkEntity: 'Brand' }),
      sellers: await createAttribute(t, { code: 'sellers', type: 'linkMultiple', linkEntity: 'Brand' }),
      fits: await createAttribute(t, { code: 'fits', type: 'multiEnum', options: ['S', 'M', 'L'] }),
      unused: await createAttribute(t, { code: 'unused', type: 'bool' }),
    };
    product = (await t.post('/api/Product', { name: 'Chair' }).expect(200)).body.id;
    bare = (await t.post('/api/Product', { name: 'Bare' }).expect(200)).body.id;
    await t
      .post(`/api/Product/${product}/upsertAttributeValues`, [
        { attributeId: a.material, value: 'wood', valueDeDE: 'Holz' },
        { attributeId: a.weight, value: 2.5, valueUnitId: units.g },
        { attributeId: a.notes, value: 'Sturdy' },
        { attributeId: a.maker, value: brand.id },
        { attributeId: a.sellers, value: [brand.id, other.id] },
        { attributeId: a.fits, value: ['S', 'L'] },
      ])
      .expect(200);
    (a as Record<string, unknown>).other = other;
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('leaves a linked record in the bin out of a multiple link attribute, and shows it again once restored', async () => {
      const gone = (await t.post(`${base}/Brand`, { name: unique('Binned') }).expect(200)).body.id as string;
      const kept = (await t.post(`${base}/Brand`, { name: unique('Kept') }).expect(200)).body;
      const id = (await t.post(`${base}/Product`, { name: 'Sold by a binned brand' }).expect(200)).body.id as string;
      await t.post(`${base}/Product/${id}/upsertAttributeValues`, [{ attributeId: a.sellers, value: [gone, kept.id] }]).expect(200);
      await t.del(`${base}/Brand/${gone}`).expect(200);
      const flat = (await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body;
      expect([flat.sellersIds, flat.sellersNames]).toEqual([[kept.id], { [kept.id]: kept.name }]);
      const listed = (await t.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=id&where[0][value]=${id}&attributes=sellers`).set(FLAT).expect(200)).body.list[0];
      expect(listed.sellersIds).toEqual([kept.id]);
      const values = (await t.get(`${base}/Product/${id}/attributeValues`).expect(200)).body as { attributeId: string; value: unknown; valueNames: unknown }[];
      expect(values.find((v) => v.attributeId === a.sellers)).toMatchObject({ value: [kept.id], valueNames: { [kept.id]: kept.name } });
      // A write of the list as read keeps the record in the bin (and its change does not name it).
      const third = (await t.post(`${base}/Brand`, { name: unique('Third') }).expect(200)).body.id as string;
      await t.patch(`${base}/Product/${id}`, { sellersIds: [kept.id, third] }).set(FLAT).expect(200);
      const stream = (await t.get(`/api/v1/Product/${id}/stream`).expect(200)).body.list as { diff: Record<string, { was: unknown; became: unknown }> }[];
      expect(stream[0].diff.sellersIds).toEqual({ was: [kept.id], became: [kept.id, third] });
      await t.post('/api/entityRestore', { entityName: 'Brand', ids: [gone] }).expect(200);
      expect(new Set((await t.get(`${base}/Product/${id}`).set(FLAT).expect(200)).body.sellersIds)).toEqual(new Set([gone, kept.id, third]));
    });

    it('shows every attribute of a single record as virtual fields with full definitions', async () => {
      const res = (await t.get(`${base}/Product/${product}`).set(FLAT).expect(200)).body;
      const other = (a as Record<string, unknown>).other as { id: string };
      expect(res).toMatchObject({
        name: 'Chair',
        material: 'wood',
        materialDeDE: 'Holz',
        weight: 2.5,
        weightUnitId: units.g,
        weightUnitName: 'g',
        notes: 'Sturdy',
        makerId: brand.id,
        makerName: 'Acme',
        sellersIds: [brand.id, other.id],
        sellersNames: { [brand.id]: 'Acme', [other.id]: 'Globex' },
        fits: ['S', 'L'],
      });
      expect(res.unused).toBeUndefined();
      expect(res.attributesDefs.weight).toEqual({
        attributeId: a.weight,
        type: 'float',
        label: 'Weight',
        measureId: units.measureId,
        readOnly: false,
        fullWidth: false,
        required: false,
      });
      // The unit's definition is keyed by its virtual field, marked unitIdField and pointing at its value.
      expect(res.attributesDefs.weightUnitId).toEqual({
        attributeId: a.weight,
        type: 'link',
        label: 'Weight (unit)',
        measureId: units.measureId,
        readOnly: false,
        fullWidth: false,
        required: false,
        entity: 'Unit',
        unitIdField: true,
        mainField: 'weight',
      });
      expect(res.attributesDefs.notes).toMatchObject({ type: 'text', fullWidth: true });
      expect(res.attributesDefs.materialDeDE).toMatchObject({ attributeId: a.material, type: 'varchar', language: 'de_DE' });
      expect(res.attributesDefs.maker).toMatchObject({ attributeId: a.maker, type: 'link', entity: 'Brand' });
      expect(Object.keys(res.attributesDefs).sort()).toEqual(['fits', 'maker', 'material', 'materialDeDE', 'notes', 'sellers', 'weight', 'weightUnitId']);
    });

    it('shows no attributes without the header (generation B: the later variant by default)', async () => {
      const res = (await t.get(`${base}/Product/${product}`).expect(200)).body;
      for (const key of ['material', 'weight', 'makerId', 'attributesDefs', 'attributesValues']) expect(res[key]).toBeUndefined();
      const list = (await t.get(`${base}/Product?allAttributes=true`).expect(200)).body;
      expect(list.list.every((r: Record<string, unknown>) => r.attributesDefs === undefined && r.weight === undefined)).toBe(true);
    });

    it('shows in lists only the attributes asked for, with minimal definitions', async () => {
      const none = (await t.get(`${base}/Product`).set(FLAT).expect(200)).body.list.find((r: { id: string }) => r.id === product);
      expect(none.attributesDefs).toEqual({});
      expect(none.weight).toBeUndefined();
      const some = (await t.get(`${base}/Product?attributes=${a.weight},material`).set(FLAT).expect(200)).body.list;
      const chair = some.find((r: { id: string }) => r.id === product);
      expect(chair).toMatchObject({ weight: 2.5, weightUnitName: 'g', material: 'wood', materialDeDE: 'Holz' });
      expect(chair.notes).toBeUndefined();
      expect(chair.attributesDefs).toEqual({
        weight: { attributeId: a.weight, type: 'float' },
        weightUnitId: { attributeId: a.weight, type: 'link' },
        material: { attributeId: a.material, type: 'varchar' },
        materialDeDE: { attributeId: a.material, type: 'varchar' },
      });
      const empty = some.find((r: { id: string }) => r.id === bare);
      expect(empty.attributesDefs).toEqual({});
      const all = (await t.get(`${base}/Product?allAttributes=true`).set(FLAT).expect(200)).body.list.find((r: { id: string }) => r.id === product);
      expect(all).toMatchObject({ notes: 'Sturdy', makerName: 'Acme', fits: ['S', 'L'] });
      await t.get(`${base}/Product?attributes=nope`).set(FLAT).expect(400);
    });

    it('shows multilingual values in the language asked for, falling back to the main value', async () => {
      const de = (await t.get(`${base}/Product/${product}`).set(FLAT).set('language', 'de_DE').expect(200)).body;
      expect(de.material).toBe('Holz');
      expect(de.materialDeDE).toBeUndefined();
      expect(de.attributesDefs.materialDeDE).toBeUndefined();
      const main = (await t.get(`${base}/Product/${product}`).set(FLAT).set('language', 'main').expect(200)).body;
      expect(main.material).toBe('wood');
      const p = (await t.post(`${base}/Product`, { name: 'Only main' }).expect(200)).body.id;
      await t.patch(`${base}/Product/${p}`, { material: 'steel' }).set(FLAT).expect(200);
      expect((await t.get(`${base}/Product/${p}`).set(FLAT).set('language', 'de_DE').expect(200)).body.material).toBe('steel');
      const values = (await t.get(`${base}/Product/${product}/attributeValues`).set('language', 'de_DE').expect(200)).body;
      expect(values.find((v: { attributeId: string }) => v.attributeId === a.material).value).toBe('Holz');
      const bad = await t.get(`${base}/Product/${product}`).set(FLAT).set('language', 'fr_FR').expect(400);
      expect(bad.body.error.code).toBe('CORE_INVALID_LANGUAGE');
    });

    it('keeps every variant in the answers of writes, whatever the language header (as for fields)', async () => {
      const p = (await t.post(`${base}/Product`, { name: unique('Answered'), material: 'oak', materialDeDE: 'Eiche' }).set(FLAT).set('language', 'de_DE').expect(200)).body;
      expect(p).toMatchObject({ material: 'oak', materialDeDE: 'Eiche' });
      const updated = (await t.patch(`${base}/Product/${p.id}`, { materialDeDE: 'Holz' }).set(FLAT).set('language', 'de_DE').expect(200)).body;
      expect(updated).toMatchObject({ material: 'oak', materialDeDE: 'Holz' });
      expect(updated.attributesDefs.materialDeDE).toMatchObject({ language: 'de_DE' });
      // A read with the header is localized.
      expect((await t.get(`${base}/Product/${p.id}`).set(FLAT).set('language', 'de_DE').expect(200)).body.material).toBe('Holz');
    });

    it('leaves the variants out with language main or the main code too, the main field carrying the main value', async () => {
      for (const language of ['main', 'en_US']) {
        const one = (await t.get(`${base}/Product/${product}`).set(FLAT).set('language', language).expect(200)).body;
        expect({ language, material: one.material, variant: one.materialDeDE }).toEqual({ language, material: 'wood', variant: undefined });
        expect(Object.keys(one.attributesDefs).sort()).toEqual(['fits', 'maker', 'material', 'notes', 'sellers', 'weight', 'weightUnitId']);
        expect(one.attributesDefs.material).toMatchObject({ attributeId: a.material, label: 'Material' });
        const list = (await t.get(`${base}/Product?attributes=material`).set(FLAT).set('language', language).expect(200)).body.list;
        const chair = list.find((r: { id: string }) => r.id === product);
        expect(chair).toMatchObject({ material: 'wood' });
        expect(chair.materialDeDE).toBeUndefined();
        expect(chair.attributesDefs).toEqual({ material: { attributeId: a.material, type: 'varchar' } });
        const values = (await t.get(`${base}/Product/${product}/attributeValues`).set('language', language).expect(200)).body;
        const material = values.find((v: { attributeId: string }) => v.attributeId === a.material);
        expect(material.value).toBe('wood');
        expect(material).not.toHaveProperty('valueDeDE');
      }
      // Without the header the variants stay.
      const values = (await t.get(`${base}/Product/${product}/attributeValues`).expect(200)).body;
      expect(values.find((v: { attributeId: string }) => v.attributeId === a.material)).toMatchObject({ value: 'wood', valueDeDE: 'Holz' });
    });

    it('keys an attribute without code by its id', async () => {
      const id = (await t.post('/api/v1/Attribute', { name: 'Anonymous', type: 'int', entityType: 'Product' }).expect(200)).body.id;
      const p = (await t.post(`${base}/Product`, { name: unique('anon') }).expect(200)).body.id;
      const written = await t.patch(`${base}/Product/${p}`, { [id]: 7 }).set(FLAT).expect(200);
      expect(written.body[id]).toBe(7);
      expect(written.body.attributesDefs[id]).toMatchObject({ attributeId: id, label: 'Anonymous' });
    });
  });
});

describe.each(TEST_DBS)('the earlier generation B variant (v1AttributesFormat nested) on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: attributeEntities, languages: LANGUAGES, v1AttributesFormat: 'nested' });
  });
  afterAll(() => t.close());

  it('carries attributesValues in generation B without the header, and flattens with it', async () => {
    const { measureId, kg } = await createWeight(t, 'weight');
    const weight = await createAttribute(t, { code: 'weight', type: 'float', measureId });
    const tag = await createAttribute(t, { code: 'tag', type: 'varchar' });
    const p = (await t.post('/api/Product', { name: 'Nested' }).expect(200)).body.id;
    await t.patch(`/api/Product/${p}`, { weight: 3, tag: 'x' }).set(FLAT).expect(200);
    const single = (await t.get(`/api/v1/Product/${p}`).expect(200)).body;
    expect(single.attributesValues).toEqual([
      { attributeId: weight, attributeValueId: expect.any(String), value: 3, valueUnitId: kg, valueUnitName: 'kg' },
      { attributeId: tag, attributeValueId: expect.any(String), value: 'x' },
    ]);
    expect(single.weight).toBeUndefined();
    const list = (await t.get('/api/v1/Product').expect(200)).body.list;
    expect(list[0].attributesValues).toHaveLength(2);
    const flat = (await t.get(`/api/v1/Product/${p}`).set(FLAT).expect(200)).body;
    expect(flat).toMatchObject({ weight: 3, tag: 'x' });
    expect(flat.attributesValues).toBeUndefined();
    // generation A is not affected by the option
    expect((await t.get(`/api/Product/${p}`).expect(200)).body.attributesValues).toBeUndefined();
  });

  it('leaves valueDeDE out of attributesValues with any language header, main included', async () => {
    const title = await createAttribute(t, { code: 'title', type: 'varchar', isMultilang: true });
    const p = (await t.post('/api/Product', { name: 'Titled' }).expect(200)).body.id;
    await t.patch(`/api/Product/${p}`, { title: 'Chair', titleDeDE: 'Stuhl' }).set(FLAT).expect(200);
    const item = (body: { attributesValues: { attributeId: string }[] }) => body.attributesValues.find((v) => v.attributeId === title);
    expect(item((await t.get(`/api/v1/Product/${p}`).expect(200)).body)).toMatchObject({ value: 'Chair', valueDeDE: 'Stuhl' });
    for (const [language, value] of [['main', 'Chair'], ['en_US', 'Chair'], ['de_DE', 'Stuhl']]) {
      const single = item((await t.get(`/api/v1/Product/${p}`).set('language', language).expect(200)).body);
      expect({ language, ...single }).toEqual({ language, attributeId: title, attributeValueId: expect.any(String), value });
      const listed = (await t.get('/api/v1/Product').set('language', language).expect(200)).body.list.find((r: { id: string }) => r.id === p);
      expect(item(listed)).not.toHaveProperty('valueDeDE');
    }
  });
});
