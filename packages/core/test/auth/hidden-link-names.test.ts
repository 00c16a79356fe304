import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole, type UserClient } from '../../../../test/support/users';

const where = (items: unknown[]) => `where=${encodeURIComponent(JSON.stringify(items))}`;
const children = where([{ type: 'startsWith', attribute: 'code', value: 'child-' }]);

/**
 * A field the role may not read is left out of every answer, also where it would name a linked
 * record: `<link>Name` and `<link>Names` then name the record by the next field that may (its
 * code, else its id), and a list sorted by the link is sorted by those names.
 */
describe.each(TEST_DBS)('names of linked records whose name the reader may not read, on %s', (kind) => {
  let t: TestApi;
  let user: UserClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    const category = async (key: string, body: Record<string, unknown>) => (ids[key] = (await t.post('/api/Category', body).expect(200)).body.id as string);
    // The hidden names sort the other way round from the codes.
    await category('zulu', { name: 'Zulu', code: 'a-code' });
    await category('alpha', { name: 'Alpha', code: 'z-code' });
    await category('first', { name: 'First child', code: 'child-1', parentId: ids.zulu });
    await category('second', { name: 'Second child', code: 'child-2', parentId: ids.alpha });
    ids.product = (await t.post('/api/Product', { name: 'Linked', categoriesIds: [ids.zulu, ids.alpha] }).expect(200)).body.id as string;
    const all = { create: true, read: 'all', edit: 'all', delete: 'all' };
    user = await userWithRole(t, { scopes: { Product: all, Category: all }, fields: { Category: { name: { read: false, edit: false } } } });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    it('names a linked record by its code in a single read, a list and a select', async () => {
      const first = (await user.get(`${base}/Category/${ids.first}`).expect(200)).body;
      expect(first).not.toHaveProperty('name');
      expect(first).toMatchObject({ parentId: ids.zulu, parentName: 'a-code' });
      const selected = (await user.get(`${base}/Category/${ids.first}?select=code,parentName`).expect(200)).body;
      expect(selected.parentName).toBe('a-code');
      const listed = (await user.get(`${base}/Category?${children}&select=code,parentName`).expect(200)).body.list;
      expect(listed.map((c: { parentName: string }) => c.parentName)).toEqual(['a-code', 'z-code']);
      const product = (await user.get(`${base}/Product/${ids.product}`).expect(200)).body;
      expect(product.categoriesNames).toEqual({ [ids.zulu]: 'a-code', [ids.alpha]: 'z-code' });
    });

    it('sorts a list by the link as the names it shows', async () => {
      for (const asc of [true, false]) {
        const listed = (await user.get(`${base}/Category?${children}&sortBy=parent&asc=${asc}`).expect(200)).body.list;
        const codes = listed.map((c: { code: string }) => c.code);
        expect(codes).toEqual(asc ? ['child-1', 'child-2'] : ['child-2', 'child-1']);
      }
      // The admin's list follows the names.
      const listed = (await t.get(`${base}/Category?${children}&sortBy=parent&asc=true`).expect(200)).body.list;
      expect(listed.map((c: { code: string }) => c.code)).toEqual(['child-2', 'child-1']);
    });

    it('names them so in linked-record lists and in the answers of writes', async () => {
      const linked = base === '/api' ? `/api/entityRelation?entityName=Category&id=${ids.zulu}&link=products` : `/api/v1/Category/${ids.zulu}/products`;
      const [product] = (await user.get(linked).expect(200)).body.list;
      expect(product.categoriesNames).toEqual({ [ids.zulu]: 'a-code', [ids.alpha]: 'z-code' });
      const updated = (await user.patch(`${base}/Product/${ids.product}`, { quantity: base.length }).expect(200)).body;
      expect(updated.categoriesNames).toEqual({ [ids.zulu]: 'a-code', [ids.alpha]: 'z-code' });
      const made = (await t.post(`${base}/Category`, { name: 'Made', code: `made-${base.length}` }).expect(200)).body.id as string;
      const child = (await user.patch(`${base}/Category/${made}`, { parentId: ids.alpha }).expect(200)).body;
      expect(child.parentName).toBe('z-code');
    });
  });

  it('an admin, and a role that may read the names, see the names', async () => {
    expect((await t.get(`/api/Category/${ids.first}`).expect(200)).body.parentName).toBe('Zulu');
    expect((await t.get(`/api/Product/${ids.product}`).expect(200)).body.categoriesNames).toEqual({ [ids.zulu]: 'Zulu', [ids.alpha]: 'Alpha' });
    const reader = await userWithRole(t, { scopes: { Category: { read: 'all' } } });
    expect((await reader.get(`/api/Category/${ids.first}`).expect(200)).body.parentName).toBe('Zulu');
  });

  it('names a linked record by its id when the reader may read none of its name fields', async () => {
    const reader = await userWithRole(t, { scopes: { Category: { read: 'all' } }, fields: { Category: { name: { read: false }, code: { read: false } } } });
    expect((await reader.get(`/api/Category/${ids.first}`).expect(200)).body.parentName).toBe(ids.zulu);
    const both = where([{ type: 'in', attribute: 'id', value: [ids.first, ids.second] }]);
    const sorted = (await reader.get(`/api/Category?${both}&sortBy=parent&select=parentName`).expect(200)).body.list;
    expect(sorted.map((c: { parentName: string }) => c.parentName)).toEqual([ids.zulu, ids.alpha].sort());
  });
});
