import meta from '@entity-records/meta';
import { GENERATIONS, startTestApi, type TestApi } from '../../../test/support/api';
import { TEST_DBS } from '../../../test/support/databases';
import { userWithRole, type UserClient } from '../../../test/support/users';
import { entities } from './fixtures';

type Rec = Record<string, any> & { id: string };

/** Roles that differ in what they may stream, edit and unlink. */
const ROLES: Record<string, { scopes: Record<string, Record<string, unknown>>; fields?: Record<string, Record<string, Record<string, boolean>>> }> = {
  everything: { scopes: { Product: { read: 'all', create: true, edit: 'all', stream: true }, Category: { read: 'all', stream: true }, Brand: { read: 'all', edit: 'all' } } },
  'read only, no stream': { scopes: { Product: { read: 'all', edit: 'no', stream: false }, Category: { read: 'all' }, Brand: { read: 'all', edit: 'no' } } },
  'own records': { scopes: { Product: { read: 'all', create: true, edit: 'own', stream: true }, Category: { read: 'all' }, Brand: { read: 'all' } } },
  'links not editable': {
    scopes: { Product: { read: 'all', create: true, edit: 'all', stream: true }, Category: { read: 'all' }, Brand: { read: 'all', edit: 'all' } },
    fields: { Product: { categories: { edit: false }, brand: { edit: false } }, Brand: { products: { edit: false } } },
  },
  'brands, not products': { scopes: { Product: { read: 'all', edit: 'no' }, Category: { read: 'all' }, Brand: { read: 'all', edit: 'all', stream: true } } },
};

/** Roles that may create brands, with every right on them but reading some. */
const WRITERS: Record<string, { scopes: Record<string, Record<string, unknown>> }> = {
  'writes, never reads': { scopes: { Brand: { create: true, read: 'no', edit: 'all', delete: 'all', stream: true } } },
  'reads its own': { scopes: { Brand: { create: true, read: 'own', edit: 'all', delete: 'all', stream: true } } },
};

/**
 * `_meta.permissions.stream` and `unlink` tell the truth (CONTRACT §11, §16): for every role, what
 * they say is what the stream route and the unlink route then do.
 */
describe.each(TEST_DBS)('_meta.permissions against the routes on %s', (kind) => {
  let t: TestApi;
  let users: Record<string, UserClient>;
  let writers: Record<string, UserClient>;
  let cats: string[];

  beforeAll(async () => {
    t = await startTestApi(kind, { entities, plugins: [meta] });
    users = {};
    for (const [name, role] of Object.entries(ROLES)) users[name] = await userWithRole(t, role);
    writers = {};
    for (const [name, role] of Object.entries(WRITERS)) writers[name] = await userWithRole(t, role);
    cats = [];
    for (const name of ['T1', 'T2']) cats.push((await t.post('/api/Category', { name }).expect(200)).body.id);
  });
  afterAll(() => t.close());

  /** A product of the admin's and one of the user's (when the role may create), with a brand and both categories. */
  const productsFor = async (user: UserClient) => {
    const brand = (await t.post('/api/Brand', { name: `Brand ${Math.random()}` }).expect(200)).body.id as string;
    const body = { name: 'P', brandId: brand, categoriesIds: cats };
    const ids = [(await t.post('/api/Product', body).expect(200)).body.id as string];
    const own = await user.post('/api/Product', { ...body, name: 'Own' });
    if (own.status === 200) ids.push(own.body.id);
    return { brand, ids };
  };

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    // A create answers the record to a role that may not read it (`read: 'no'`); every other route
    // reads the record first, so such a role may neither change, delete nor stream it.
    it.each(Object.keys(WRITERS))('edit, delete, stream: what a create answer of %s says is what the routes do', async (name) => {
      const user = writers[name];
      const created = await user.post(`${base}/Brand`, { name: `Brand ${Math.random()}` }).set('With-Meta', 'true').expect(200);
      const said = created.body._meta.permissions as { edit: boolean; delete: boolean; stream: boolean };
      const id = created.body.id as string;
      const streams = [(await user.get(`${base}/entityStream?entityName=Brand&id=${id}`)).status, (await user.get(`/api/v1/Brand/${id}/stream`)).status];
      const edits = [(await user.patch(`${base}/Brand/${id}`, { name: `Brand ${Math.random()}` })).status, (await user.put(`${base}/Brand/${id}`, { name: `Brand ${Math.random()}` })).status];
      const deletes = (await user.del(`${base}/Brand/${id}`)).status;
      expect({ name, streams, edits, deletes }).toEqual({
        name,
        streams: said.stream ? [200, 200] : [403, 403],
        edits: said.edit ? [200, 200] : [403, 403],
        deletes: said.delete ? 200 : 403,
      });
    });

    it.each(Object.keys(ROLES))('stream: what _meta says for %s is what the stream route answers', async (name) => {
      const user = users[name];
      const { brand, ids } = await productsFor(user);
      for (const [entity, id] of [...ids.map((i) => ['Product', i]), ['Brand', brand]]) {
        const said = (await user.get(`${base}/${entity}/${id}`).set('With-Meta', 'true').expect(200)).body._meta.permissions.stream;
        for (const path of [`${base}/entityStream?entityName=${entity}&id=${id}`, `/api/v1/${entity}/${id}/stream`]) {
          const status = (await user.get(path)).status;
          expect([name, entity, path, said, status]).toEqual([name, entity, path, said, said ? 200 : 403]);
        }
      }
    });

    it.each(Object.keys(ROLES))('unlink: what _meta says for %s is what the unlink route does', async (name) => {
      const user = users[name];
      const { brand, ids } = await productsFor(user);
      const cases: [string, string, string][] = [['Brand', brand, 'products'], ...ids.flatMap((id): [string, string, string][] => [['Product', id, 'categories'], ['Product', id, 'brand']])];
      for (const [entity, id, link] of cases) {
        const listed = (await user.get(`${base}/entityRelation?entityName=${entity}&id=${id}&link=${link}`).set('With-Meta', 'true').expect(200)).body.list as Rec[];
        expect(listed.length).toBeGreaterThan(0);
        const target = listed[0];
        const said = target._meta.permissions.unlink as boolean;
        const res = await user.del(`${base}/${entity}/${id}/${link}?id=${target.id}`);
        expect([name, entity, link, said, res.status]).toEqual([name, entity, link, said, said ? 200 : 403]);
        const after = (await t.get(`/api/entityRelation?entityName=${entity}&id=${id}&link=${link}`).expect(200)).body.list.map((r: Rec) => r.id);
        expect(after.includes(target.id)).toBe(!said);
        // linked again for the next case
        if (said) await t.post(`/api/${entity}/${id}/${link}`, { id: target.id }).expect(200);
      }
    });
  });
});
