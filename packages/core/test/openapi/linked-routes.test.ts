import { ADMIN, GENERATIONS, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { clientFor, delegatedToken, userWithRole } from '../../../../test/support/users';
import { startWithDocument, type Doc, type Operation } from './support';

/** Product's links, its own and the server's (the actors of a delegated session are write-only). */
const LINKS = ['brand', 'categories', 'createdBy', 'modifiedBy', 'createdByActor', 'modifiedByActor'];

/**
 * The linked-record routes the server serves are those the OpenAPI document names (CONTRACT §12),
 * and the other way round: the system's links `createdBy` and `modifiedBy` are read, never
 * written; the write-only actors of a delegated session are neither read nor written.
 */
describe.each(TEST_DBS)('linked-record routes and the OpenAPI document on %s', (kind) => {
  let t: TestApi;
  let doc: Doc;
  let product: string;
  let userId: string;
  beforeAll(async () => {
    ({ t, doc } = await startWithDocument(kind, { entities: testEntities }));
    const user = await userWithRole(t, { scopes: { Product: { read: 'all', create: true, edit: 'all' }, Brand: { read: 'all' }, Category: { read: 'all', edit: 'all' }, User: { read: 'all' } } });
    userId = user.user.id;
    // Made by the admin acting for the user: the actor columns hold the admin.
    const delegated = clientFor(t, await delegatedToken(t, ADMIN.userName, ADMIN.password, user.user.userName), user.user);
    const brand = (await t.post('/api/Brand', { name: 'Linked routes' }).expect(200)).body.id;
    const category = (await t.post('/api/Category', { name: 'Linked routes', code: 'linked-routes' }).expect(200)).body.id;
    product = (await delegated.post('/api/Product', { name: 'Delegated', brandId: brand }).expect(200)).body.id;
    await delegated.post(`/api/Product/${product}/categories`, { id: category }).expect(200);
  });
  afterAll(() => t.close());

  const operation = (path: string, method: string) => doc.paths[path]?.[method] as Operation | undefined;

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    it.each(LINKS)('%s: served as listed, read and written as documented', async (link) => {
      const path = `${base}/Product/{id}/${link}`;
      const documented = { get: !!operation(path, 'get'), post: !!operation(path, 'post'), delete: !!operation(path, 'delete') };
      const readable = !link.endsWith('Actor');
      const ownLink = link === 'brand' || link === 'categories';
      // Generation B lists linked records at the link's path; both list them through entityRelation.
      expect({ link, documented }).toEqual({ link, documented: { get: gen === 'B' && readable, post: ownLink, delete: ownLink } });
      const relation = await t.get(`${base}/entityRelation?entityName=Product&id=${product}&link=${link}`);
      const listed = await t.get(`${base}/Product/${product}/${link}`);
      expect({ link, relation: relation.status, listed: listed.status }).toEqual({ link, relation: readable ? 200 : 404, listed: documented.get ? 200 : 404 });
      if (!documented.get) expect(listed.body.error.code).toBe(gen === 'B' ? 'CORE_NOT_FOUND' : 'CORE_ROUTE_NOT_FOUND');
      if (!readable) expect(relation.body.error).toMatchObject({ code: 'CORE_NOT_FOUND', message: `Product has no link '${link}'` });
      if (link === 'createdBy' || link === 'modifiedBy') {
        // The user the admin acted for, never the admin.
        for (const res of [relation, listed].filter((r) => r.status === 200)) expect(res.body.list.map((u: { id: string }) => u.id)).toEqual([userId]);
      }
      if (!ownLink) {
        // No link route writes a link of the server's.
        const posted = await t.post(`${base}/Product/${product}/${link}`, { id: userId });
        const deleted = await t.del(`${base}/Product/${product}/${link}?id=${userId}`);
        expect({ link, posted: posted.status, deleted: deleted.status, code: deleted.body.error?.code }).toEqual({ link, posted: 404, deleted: 404, code: 'CORE_NOT_FOUND' });
      }
    });

    it('names the links the server writes among those entityRelation reads', () => {
      const param = (operation(`${base}/entityRelation`, 'get')?.parameters ?? []).find((p) => p.name === 'link') as { description?: string } | undefined;
      expect(param?.description).toMatch(/`createdBy`, `modifiedBy`/);
    });
  });

  it('describes GET /{Entity}/{id}/createdBy as the user the server stored, read with the rights on User', () => {
    for (const link of ['createdBy', 'modifiedBy']) {
      const get = operation(`/api/v1/Product/{id}/${link}`, 'get') as Operation & { description: string; responses: Record<string, { content: unknown }> };
      expect(get.operationId).toBe(`v1_listProduct${link.charAt(0).toUpperCase()}${link.slice(1)}`);
      expect(get.description).toMatch(/Written by the server only/);
      expect(get.responses['200'].content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/UserList' } } });
    }
  });
});
