import multilang from '@entity-records/multilang';
import { countQueries, GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole } from '../../../test/support/users';
import { entities, LANGUAGES } from './fixtures';

type Rec = Record<string, unknown> & { id: string };

describe.each(TEST_DBS)('multilingual fields on %s', (kind) => {
  let t: TestApi;
  let chairs: Rec;
  let tables: Rec;
  let stuhl: Rec;
  let plain: Rec;
  let option: Rec;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities, plugins: [multilang], languages: LANGUAGES, auth: { tokenCacheSeconds: 3600 } });
    const list = (await t.post('/api/ExtensibleEnum', { code: 'status', name: 'Status' }).expect(200)).body;
    option = (await t.post('/api/ExtensibleEnumOption', { code: 'ready', name: 'Ready', nameDeDE: 'Bereit', extensibleEnumId: list.id }).expect(200)).body;
    chairs = (await t.post('/api/Category', { name: 'Chairs', nameDeDE: 'Stühle', code: 'chairs' }).expect(200)).body;
    tables = (await t.post('/api/Category', { name: 'Tables', code: 'tables' }).expect(200)).body;
    const brand = (await t.post('/api/Brand', { name: 'Acme' }).expect(200)).body;
    stuhl = (await t.post('/api/Product', {
      name: 'Chair',
      nameDeDE: 'Stuhl',
      nameFrFR: '',
      description: 'A chair',
      descriptionDeDE: 'Ein Stuhl',
      sku: 'CH',
      brandId: brand.id,
      categoriesIds: [chairs.id, tables.id],
      statusId: option.id,
    }).expect(200)).body;
    plain = (await t.post('/api/Product', { name: 'Lamp', sku: 'LA', brandId: brand.id }).expect(200)).body;
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s (%s)', (_gen, base) => {
    const names = (body: { list: Rec[] }) => body.list.map((r) => r.name);

    it('stores a variant per language other than the main one, written and read like any field', async () => {
      expect(stuhl).toMatchObject({ name: 'Chair', nameDeDE: 'Stuhl', nameFrFR: '', description: 'A chair', descriptionDeDE: 'Ein Stuhl', descriptionFrFR: null });
      expect(Object.keys(stuhl).slice(0, 4)).toEqual(['id', 'name', 'nameDeDE', 'nameFrFR']);
      const changed = await t.patch(`${base}/Product/${plain.id}`, { nameFrFR: `Lampe ${base}` }).expect(200);
      expect(changed.body).toMatchObject({ name: 'Lamp', nameDeDE: null, nameFrFR: `Lampe ${base}` });
      const read = await t.get(`${base}/Product/${plain.id}`).expect(200);
      expect(read.body.nameFrFR).toBe(`Lampe ${base}`);
      const long = await t.post(`${base}/Category`, { name: 'x', code: `long-${base}`, nameDeDE: 'x'.repeat(41) }).expect(400);
      expect(long.body.error.details.issues[0].path).toEqual(['nameDeDE']);
    });

    it('requires the main value only', async () => {
      const created = await t.post(`${base}/Category`, { name: 'Only main', code: `main-${base}` }).expect(200);
      expect(created.body).toMatchObject({ nameDeDE: null, nameFrFR: null });
      const missing = await t.post(`${base}/Category`, { nameDeDE: 'Nur deutsch', code: `de-${base}` }).expect(400);
      expect(missing.body.error.details.issues).toEqual([expect.objectContaining({ path: ['name'] })]);
      await t.patch(`${base}/Category/${created.body.id}`, { nameDeDE: null }).expect(200);
    });

    it('filters and sorts by a variant', async () => {
      const where = 'where[0][type]=equals&where[0][attribute]=nameDeDE&where[0][value]=Stuhl';
      expect((await t.get(`${base}/Product?${where}`).expect(200)).body).toMatchObject({ total: 1, list: [{ id: stuhl.id }] });
      const sorted = await t.get(`${base}/Category?sortBy=nameDeDE&asc=false&select=name,nameDeDE&where[0][type]=isNotNull&where[0][attribute]=nameDeDE`).expect(200);
      expect(sorted.body.list[0]).toEqual({ id: chairs.id, name: 'Chairs', nameDeDE: 'Stühle' });
    });

    it('answers a list in the language asked for, without variants, falling back to the main value', async () => {
      const ours = 'sortBy=sku&where[0][type]=in&where[0][attribute]=sku&where[0][value][]=CH&where[0][value][]=LA';
      const res = await t.get(`${base}/Product?${ours}`).set('language', 'de_DE').expect(200);
      expect(names(res.body)).toEqual(['Stuhl', 'Lamp']);
      expect(res.body.list[0]).toMatchObject({ description: 'Ein Stuhl', statusName: 'Bereit', categoriesNames: { [chairs.id]: 'Stühle', [tables.id]: 'Tables' } });
      for (const record of res.body.list) expect(Object.keys(record).filter((k) => /(DeDE|FrFR)$/.test(k))).toEqual([]);
      // Chair's French name is empty, the Lamp's was set above
      const french = await t.get(`${base}/Product?${ours}&select=name,description`).set('language', 'fr_FR').expect(200);
      expect(french.body.list).toEqual([
        { id: stuhl.id, name: 'Chair', description: 'A chair' },
        { id: plain.id, name: `Lampe ${base}`, description: null },
      ]);
    });

    it('answers a single record in the language asked for, also with select', async () => {
      const res = await t.get(`${base}/Product/${stuhl.id}?select=name,status`).set('language', 'de_DE').expect(200);
      expect(res.body).toEqual({ id: stuhl.id, name: 'Stuhl', statusId: option.id, statusName: 'Bereit' });
      const all = await t.get(`${base}/Product/${stuhl.id}`).set('language', 'de_DE').expect(200);
      expect(all.body).toMatchObject({ name: 'Stuhl', description: 'Ein Stuhl' });
      expect(all.body.nameDeDE).toBeUndefined();
    });

    it('answers linked records in the language asked for', async () => {
      const paths = [`${base}/entityRelation?entityName=Product&id=${stuhl.id}&link=categories&sortBy=code`];
      if (base === '/api/v1') paths.push(`${base}/Product/${stuhl.id}/categories?sortBy=code`);
      for (const path of paths) {
        const res = await t.get(path).set('language', 'de_DE').expect(200);
        expect(res.body.list.map((r: Rec) => [r.name, r.nameDeDE])).toEqual([['Stühle', undefined], ['Tables', undefined]]);
      }
    });

    it('gives the main values for main and for the main code, variants removed', async () => {
      for (const language of ['main', 'en_US']) {
        const res = await t.get(`${base}/Product/${stuhl.id}`).set('language', language).expect(200);
        expect(res.body).toMatchObject({ name: 'Chair', description: 'A chair', statusName: 'Ready' });
        expect(Object.keys(res.body).filter((k) => /(DeDE|FrFR)$/.test(k))).toEqual([]);
      }
    });

    it('refuses an unknown language with 400', async () => {
      for (const path of [`${base}/Product`, `${base}/Product/${stuhl.id}`, `${base}/entityRelation?entityName=Product&id=${stuhl.id}&link=categories`]) {
        const res = await t.get(path).set('language', 'it_IT').expect(400);
        expect(res.body.error.code).toBe('CORE_INVALID_LANGUAGE');
      }
    });

    it('leaves create and update answers and upsert results in every language', async () => {
      const created = await t.post(`${base}/Category`, { name: 'Beds', nameDeDE: 'Betten', code: `beds-${base}` }).set('language', 'de_DE').expect(200);
      expect(created.body).toMatchObject({ name: 'Beds', nameDeDE: 'Betten' });
      const upserted = await t.post(`${base}/upsert`, [{ entity: 'Category', payload: { code: `beds-${base}`, nameFrFR: 'Lits' } }]).set('language', 'de_DE').expect(200);
      expect(upserted.body[0]).toMatchObject({ status: 'Updated', entity: { name: 'Beds', nameDeDE: 'Betten', nameFrFR: 'Lits' } });
    });

    it('finds linked records by their main value', async () => {
      const res = await t.post(`${base}/Product`, { name: `Sofa ${base}`, categories: [{ name: 'Chairs' }] }).set('language', 'de_DE').expect(200);
      expect(res.body.categoriesIds).toEqual([chairs.id]);
      const none = await t.post(`${base}/Product`, { name: `Bench ${base}`, categories: [{ name: 'Stühle', code: `stuehle-${base}` }] }).expect(200);
      expect(none.body.categoriesIds).not.toContain(chairs.id);
    });

    it('shows multilingual fields, their variants and the languages in the metadata', async () => {
      const res = await t.get(base === '/api' ? '/api/metadata' : '/api/v1/Metadata').expect(200);
      expect(res.body.app.languages).toEqual(LANGUAGES);
      const fields = res.body.entityDefs.Product.fields;
      expect(fields.name).toMatchObject({ type: 'varchar', required: true, isMultilang: true });
      expect(fields.nameDeDE).toMatchObject({ type: 'varchar', multilangField: 'name', multilangLocale: 'de_DE' });
      expect(fields.nameDeDE.required).toBeUndefined();
      expect(fields.descriptionFrFR).toMatchObject({ type: 'text', multilangField: 'description', multilangLocale: 'fr_FR' });
      expect(res.body.entityDefs.ExtensibleEnumOption.fields.name).toMatchObject({ isMultilang: true });
    });
  });

  it('shows the main value to a role that may not read the variant', async () => {
    const u = await userWithRole(t, { scopes: { Product: { read: 'all' } }, fields: { Product: { nameDeDE: { read: false } } } });
    const res = await u.get(`/api/Product/${stuhl.id}`).set('language', 'de_DE').expect(200);
    expect(res.body).toMatchObject({ name: 'Chair', description: 'Ein Stuhl' });
    await u.get('/api/Product?where[0][type]=equals&where[0][attribute]=nameDeDE&where[0][value]=x').expect(403);
  });

  it('describes the variants in the OpenAPI document', () => {
    const doc = t.api.openapi() as { components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }>; parameters: Record<string, unknown> } };
    const { schemas } = doc.components;
    expect(Object.keys(schemas.Product.properties)).toEqual(expect.arrayContaining(['name', 'nameDeDE', 'nameFrFR', 'descriptionDeDE']));
    expect(schemas.ProductCreate.required).toEqual(['name']);
    expect(schemas.ProductUpdate.properties.nameDeDE).toMatchObject({ type: ['string', 'null'] });
    expect(doc.components.parameters.Language).toMatchObject({ name: 'language', in: 'header', schema: { enum: [...LANGUAGES, 'main'] } });
  });

  it('reads a page in the language asked for in a constant number of queries', async () => {
    for (let i = 0; i < 12; i++) await t.post('/api/Product', { name: `P${i}`, nameDeDE: `D${i}`, categoriesIds: [chairs.id] }).expect(200);
    const count = async (path: string) => {
      const send = () => t.get(path).set('language', 'de_DE').expect(200);
      await send();
      return countQueries(t, send);
    };
    // count + rows + categories + the German names of the linked categories
    expect(await count('/api/Product?select=name,categories&maxSize=3')).toBe(4);
    expect(await count('/api/Product?select=name,categories&maxSize=15')).toBe(4);
    expect(await count('/api/Product?select=name,sku&maxSize=15')).toBe(2);
  });
});
