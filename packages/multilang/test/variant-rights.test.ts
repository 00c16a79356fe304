import multilang from '@entity-records/multilang';
import { GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../test/support/users';
import { entities } from './fixtures';

type Rec = Record<string, unknown> & { id: string };

const PRODUCTS = { Product: { create: true, read: 'all', edit: 'all', delete: 'no' } };
const metadataPath = (base: string) => (base === '/api' ? '/api/metadata' : '/api/v1/Metadata');

describe.each(TEST_DBS)('field rights of a multilingual field hold for its variants, on %s', (kind) => {
  let t: TestApi;
  let product: Rec;
  /** May not read Product.name. */
  let nameHidden: UserClient;
  /** May read but not edit Product.description. */
  let descriptionLocked: UserClient;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities, plugins: [multilang], languages: ['en_US', 'de_DE', 'fr_FR'] });
    product = (await t.post('/api/Product', { name: 'Secret', nameDeDE: 'Geheim', nameFrFR: 'Secrète', description: 'Text', descriptionDeDE: 'Text DE' }).expect(200)).body;
    nameHidden = await userWithRole(t, { scopes: PRODUCTS, fields: { Product: { name: { read: false } } } });
    descriptionLocked = await userWithRole(t, { scopes: PRODUCTS, fields: { Product: { description: { edit: false } } } });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('a role that may not read a field reads none of its variants, in records and metadata', async () => {
      const one = (await nameHidden.get(`${base}/Product/${product.id}`).expect(200)).body;
      expect(one).not.toHaveProperty('name');
      expect(one).not.toHaveProperty('nameDeDE');
      expect(one).not.toHaveProperty('nameFrFR');
      expect(one.descriptionDeDE).toBe('Text DE');
      const list = (await nameHidden.get(`${base}/Product`).expect(200)).body.list as Rec[];
      expect(list.find((r) => r.id === product.id)).not.toHaveProperty('nameDeDE');
      const fields = (await nameHidden.get(metadataPath(base)).expect(200)).body.entityDefs.Product.fields;
      expect(Object.keys(fields)).not.toEqual(expect.arrayContaining(['nameDeDE']));
      expect(Object.keys(fields)).not.toEqual(expect.arrayContaining(['nameFrFR']));
      expect(Object.keys(fields)).toEqual(expect.arrayContaining(['descriptionDeDE']));
    });

    it('nor selects, filters or sorts by them (403)', async () => {
      await nameHidden.get(`${base}/Product?select=nameDeDE`).expect(403);
      await nameHidden.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=nameDeDE&where[0][value]=Geheim`).expect(403);
      await nameHidden.get(`${base}/Product?sortBy=nameFrFR`).expect(403);
    });

    it('nor writes them, on any write route', async () => {
      await nameHidden.patch(`${base}/Product/${product.id}`, { nameDeDE: 'x' }).expect(403);
      const upsert = (await nameHidden.post(`${base}/upsert`, [{ entity: 'Product', payload: { id: product.id, nameFrFR: 'x' } }]).expect(200)).body;
      expect(upsert[0]).toMatchObject({ status: 'Failed', message: 'Not allowed to edit Product.nameFrFR' });
      await nameHidden.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [product.id], values: { nameDeDE: 'x' } }).expect(403);
      expect((await t.get(`/api/Product/${product.id}`).expect(200)).body).toMatchObject({ nameDeDE: 'Geheim', nameFrFR: 'Secrète' });
    });

    it('a role that may not edit a field edits none of its variants (403, upsert item Failed), and reads them', async () => {
      const res = await descriptionLocked.patch(`${base}/Product/${product.id}`, { descriptionDeDE: 'changed' }).expect(403);
      expect(res.body.error.message).toBe('Not allowed to edit Product.descriptionDeDE');
      await descriptionLocked.put(`${base}/Product/${product.id}`, { descriptionFrFR: 'changed' }).expect(403);
      const upsert = (await descriptionLocked.post(`${base}/upsert`, [{ entity: 'Product', payload: { id: product.id, descriptionDeDE: 'changed' } }]).expect(200)).body;
      expect(upsert[0]).toMatchObject({ status: 'Failed', message: 'Not allowed to edit Product.descriptionDeDE' });
      await descriptionLocked.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [product.id], values: { descriptionDeDE: 'changed' } }).expect(403);
      // The rest of the record stays editable, and the variant readable.
      await descriptionLocked.patch(`${base}/Product/${product.id}`, { nameDeDE: 'Geheim' }).expect(200);
      const stored = (await descriptionLocked.get(`${base}/Product/${product.id}`).expect(200)).body;
      expect(stored.descriptionDeDE).toBe('Text DE');
      expect((await t.get(`/api/Product/${product.id}`).expect(200)).body.descriptionFrFR).toBeNull();
    });
  });
});
