import multilang from '@entity-records/multilang';
import { GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { Brand, Category, LANGUAGES, Product } from './fixtures';

const FLAT = { 'Flatten-Attributes': 'true' };

describe.each(TEST_DBS)('attribute values with multilingual linked records on %s', (kind) => {
  let t: TestApi;
  let product: string;
  let chairs: { id: string };
  let tables: { id: string };
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Brand, Category, { ...Product, hasAttributes: true }], plugins: [multilang], languages: LANGUAGES });
    chairs = (await t.post('/api/Category', { name: 'Chairs', nameDeDE: 'Stühle', code: 'a-chairs' }).expect(200)).body;
    tables = (await t.post('/api/Category', { name: 'Tables', code: 'a-tables' }).expect(200)).body;
    for (const [code, type] of [['shelf', 'link'], ['rooms', 'linkMultiple']]) {
      await t.post('/api/Attribute', { code, type, entityType: 'Product', linkEntity: 'Category' }).expect(200);
    }
    product = (await t.post('/api/Product', { name: 'Chair', shelfId: chairs.id, roomsIds: [chairs.id, tables.id] }).set(FLAT).expect(200)).body.id;
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('names linked records in the language asked for, like link fields (main name where the variant is empty)', async () => {
      const german = { [chairs.id]: 'Stühle', [tables.id]: 'Tables' };
      const one = (await t.get(`${base}/Product/${product}`).set(FLAT).set('language', 'de_DE').expect(200)).body;
      expect(one).toMatchObject({ shelfName: 'Stühle', roomsNames: german });
      const list = (await t.get(`${base}/Product?allAttributes=true`).set(FLAT).set('language', 'de_DE').expect(200)).body.list;
      expect(list[0]).toMatchObject({ shelfName: 'Stühle', roomsNames: german });
      const values = (await t.get(`${base}/Product/${product}/attributeValues`).set('language', 'de_DE').expect(200)).body;
      expect(values.map((v: { valueName?: string; valueNames?: unknown }) => v.valueName ?? v.valueNames)).toEqual(['Stühle', german]);
      for (const language of ['main', 'en_US', undefined]) {
        const test = t.get(`${base}/Product/${product}`).set(FLAT);
        const main = (await (language ? test.set('language', language) : test).expect(200)).body;
        expect(main).toMatchObject({ shelfName: 'Chairs', roomsNames: { [chairs.id]: 'Chairs', [tables.id]: 'Tables' } });
      }
    });
  });
});
