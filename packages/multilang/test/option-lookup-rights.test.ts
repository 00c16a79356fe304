import multilang from '@entity-records/multilang';
import { GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../test/support/users';
import { entities } from './fixtures';

type Rec = Record<string, unknown> & { id: string };

// A link object finds an option of the field's own list without any right on the option type (it
// is read through the field, as statusName shows it), but a field of the option that the caller's
// roles hide is no search key: matched or not, the answer would tell its value.
describe.each(TEST_DBS)('find-or-create of an option by a field the caller may not read, on %s', (kind) => {
  let t: TestApi;
  let ready: Rec;
  let product: Rec;
  /** Edits products, reads options, but not their code nor their German name. */
  let hidden: UserClient;
  /** Edits products, no right on options at all. */
  let bare: UserClient;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities, plugins: [multilang], languages: ['en_US', 'de_DE', 'fr_FR'] });
    const list = (await t.post('/api/ExtensibleEnum', { code: 'status', name: 'Status' }).expect(200)).body;
    ready = (await t.post('/api/ExtensibleEnumOption', { code: 'ready', name: 'Ready', nameDeDE: 'Bereit', extensibleEnumId: list.id }).expect(200)).body;
    const products = { Product: { create: true, read: 'all', edit: 'all', delete: 'no' } };
    hidden = await userWithRole(t, {
      scopes: { ...products, ExtensibleEnumOption: { create: false, read: 'all', edit: 'no', delete: 'no' } },
      fields: { ExtensibleEnumOption: { code: { read: false, edit: false }, name: { read: false, edit: false } } },
    });
    bare = await userWithRole(t, { scopes: products });
    product = (await hidden.post('/api/Product', { name: 'Chair' }).expect(200)).body;
  });
  afterAll(() => t.close());

  const statusOf = async (id: string) => (await t.get(`/api/Product/${id}`).expect(200)).body.statusId;

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it.each([
      ['code', { code: 'ready' }],
      ['code (no such option)', { code: 'nothing' }],
      ['a language variant of a hidden name', { nameDeDE: 'Bereit' }],
      ['a hidden name', { name: 'Ready' }],
    ])('is 403 by %s on every write route, and links nothing', async (_what, status) => {
      const refused = (res: { body: { error: { code: string; message: string } } }) => {
        expect(res.body.error.code).toBe('CORE_FORBIDDEN');
        expect(res.body.error.message).toMatch(/^Not allowed to read ExtensibleEnumOption\.(code|name|nameDeDE)$/);
      };
      refused(await hidden.post(`${base}/Product`, { name: `New ${base}`, status }).expect(403));
      refused(await hidden.patch(`${base}/Product/${product.id}`, { status }).expect(403));
      refused(await hidden.put(`${base}/Product/${product.id}`, { status }).expect(403));
      // a mass update refuses it before any record, as PATCH does
      refused(await hidden.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [product.id], values: { status } }).expect(403));
      const upsert = (await hidden.post(`${base}/upsert`, [{ entity: 'Product', payload: { id: product.id, status } }]).expect(200)).body;
      expect(upsert).toEqual([{ status: 'Failed', stored: false, message: expect.stringMatching(/^Not allowed to read ExtensibleEnumOption\.(code|name|nameDeDE)$/) }]);
      expect(await statusOf(product.id)).toBeNull();
      const mine = (await hidden.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=name&where[0][value]=${encodeURIComponent(`New ${base}`)}`).expect(200)).body;
      expect(mine.total).toBe(0);
    });

    it('still finds an option by the fields the caller may read, with or without rights on the option type', async () => {
      const own = (await bare.post(`${base}/Product`, { name: `Bare ${base}`, status: { code: 'ready' } }).expect(200)).body;
      expect(own.statusId).toBe(ready.id);
      await bare.patch(`${base}/Product/${own.id}`, { status: { nameDeDE: 'Bereit' } }).expect(200);
    });
  });
});
