import request from 'supertest';
import { GENERATIONS, requestsTo, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';

type Scopes = Record<string, Record<string, unknown>>;

describe.each(TEST_DBS)('roles and permissions on %s', (kind) => {
  let t: TestApi;
  let n = 0;
  const as = (token: string) => requestsTo(t.server, (r) => r.set('Authorization-Token', token));
  /** A user holding new roles with these scopes/fields; returns a client acting as them. */
  async function userWith(...roles: { scopes: Scopes; fields?: Scopes }[]) {
    n += 1;
    const rolesIds = [];
    for (const [i, r] of roles.entries()) rolesIds.push((await t.post('/api/Role', { name: `role ${n}.${i}`, ...r }).expect(200)).body.id);
    const userName = `user${n}`;
    const user = (await t.post('/api/User', { userName, password: 'pw-123456', rolesIds }).expect(200)).body;
    const token = (await request(t.server).get('/api/userSession').auth(userName, 'pw-123456').set('Authorization-Token-Only', 'true').expect(200)).body
      .authorizationToken;
    return { ...as(token), user, rolesIds, token };
  }

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_gen, base) => {
    it('denies entity types no role mentions, for lists and reads alike', async () => {
      const u = await userWith({ scopes: { Brand: { read: 'all' } } });
      const p = (await t.post(`${base}/Product`, { name: 'Hidden' }).expect(200)).body;
      expect((await u.get(`${base}/Product`).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      await u.get(`${base}/Product/${p.id}`).expect(403);
      await u.post(`${base}/Product`, { name: 'x' }).expect(403);
      await u.get(`${base}/Brand`).expect(200);
      await u.post(`${base}/Brand`, { name: 'x' }).expect(403);
    });

    it('limits read/edit/delete to own records and hides others as 404', async () => {
      const u = await userWith({ scopes: { Product: { create: true, read: 'own', edit: 'own', delete: 'own' } } });
      const mine = (await u.post(`${base}/Product`, { name: 'Mine' }).expect(200)).body;
      const theirs = (await t.post(`${base}/Product`, { name: 'Theirs' }).expect(200)).body;
      const list = (await u.get(`${base}/Product`).expect(200)).body;
      expect(list.total).toBe(1);
      expect(list.list.map((r: { id: string }) => r.id)).toEqual([mine.id]);
      await u.get(`${base}/Product/${theirs.id}`).expect(404);
      await u.patch(`${base}/Product/${theirs.id}`, { name: 'x' }).expect(404);
      await u.del(`${base}/Product/${theirs.id}`).expect(404);
      await u.patch(`${base}/Product/${mine.id}`, { name: 'Mine 2' }).expect(200);
      await u.del(`${base}/Product/${mine.id}`).expect(200);
    });

    it('refuses edit and delete on visible records without the right (403), and combines roles to the most permissive', async () => {
      const reader = await userWith({ scopes: { Brand: { read: 'all', edit: 'no', delete: 'no' } } });
      const b = (await t.post(`${base}/Brand`, { name: `Combined ${base}` }).expect(200)).body;
      await reader.patch(`${base}/Brand/${b.id}`, { code: 'x' }).expect(403);
      await reader.del(`${base}/Brand/${b.id}`).expect(403);
      const both = await userWith({ scopes: { Brand: { read: 'own' } } }, { scopes: { Brand: { read: 'all', edit: 'all' } } });
      await both.get(`${base}/Brand/${b.id}`).expect(200);
      await both.patch(`${base}/Brand/${b.id}`, { code: 'y' }).expect(200);
      await both.del(`${base}/Brand/${b.id}`).expect(403);
    });

    it('hides unreadable fields and refuses filter, sort or select on them with the same 403 whatever the value', async () => {
      const u = await userWith({ scopes: { Product: { read: 'all', create: true, edit: 'all' } }, fields: { Product: { price: { read: false } } } });
      const p = (await t.post(`${base}/Product`, { name: 'Priced', price: 42 }).expect(200)).body;
      const read = (await u.get(`${base}/Product/${p.id}`).expect(200)).body;
      expect(read.name).toBe('Priced');
      expect('price' in read).toBe(false);
      expect((await u.get(`${base}/Product`).expect(200)).body.list.every((r: object) => !('price' in r))).toBe(true);
      const probe = async (value: number) => {
        const res = await u.get(`${base}/Product?where[0][type]=equals&where[0][attribute]=price&where[0][value]=${value}`);
        return [res.status, JSON.stringify(res.body)];
      };
      expect(await probe(42)).toEqual(await probe(7));
      expect((await probe(42))[0]).toBe(403);
      await u.get(`${base}/Product?sortBy=price`).expect(403);
      await u.get(`${base}/Product?select=name,price`).expect(403);
      await u.post(`${base}/Product`, { name: 'x', price: 1 }).expect(403);
      const created = (await u.post(`${base}/Product`, { name: 'No price' }).expect(200)).body;
      expect('price' in created).toBe(false);
    });

    it('refuses writing a non-editable field, also sent back unchanged (the answer never depends on the stored value)', async () => {
      const u = await userWith({ scopes: { Product: { read: 'all', edit: 'all' } }, fields: { Product: { sku: { edit: false } } } });
      const p = (await t.post(`${base}/Product`, { name: 'Locked', sku: `LOCK-${base}` }).expect(200)).body;
      const changed = await u.patch(`${base}/Product/${p.id}`, { sku: 'OTHER' }).expect(403);
      const unchanged = await u.patch(`${base}/Product/${p.id}`, { sku: `LOCK-${base}`, name: 'Locked 2' }).expect(403);
      expect(unchanged.body).toEqual(changed.body);
      const ok = await u.patch(`${base}/Product/${p.id}`, { name: 'Locked 2' }).expect(200);
      expect(ok.body).toMatchObject({ sku: `LOCK-${base}`, name: 'Locked 2' });
    });

    it('lets find-or-create match only what the caller may read (no name oracle)', async () => {
      const secret = (await t.post(`${base}/Brand`, { name: `Secret ${base}`, code: 'S' }).expect(200)).body;
      const blind = await userWith({ scopes: { Product: { create: true, read: 'all' }, Brand: { create: true, read: 'no' } } });
      await blind.post(`${base}/Product`, { name: 'x', brand: { name: `Secret ${base}` } }).expect(403);
      const noCode = await userWith({ scopes: { Product: { create: true, read: 'all' }, Brand: { create: true, read: 'all' } }, fields: { Brand: { code: { read: false, edit: false } } } });
      await noCode.post(`${base}/Product`, { name: 'x', brand: { name: `Secret ${base}`, code: 'S' } }).expect(403);
      // under `own`, another user's brand is not found: the new one collides on the unique name
      const own = await userWith({ scopes: { Product: { create: true, read: 'all' }, Brand: { create: true, read: 'own' } } });
      await own.post(`${base}/Product`, { name: 'x', brand: { name: `Secret ${base}` } }).expect(409);
      const mine = (await own.post(`${base}/Product`, { name: 'y', brand: { name: `Own ${base}` } }).expect(200)).body;
      const again = (await own.post(`${base}/Product`, { name: 'z', brand: { name: `Own ${base}` } }).expect(200)).body;
      expect(again.brandId).toBe(mine.brandId);
      expect(mine.brandId).not.toBe(secret.id);
    });

    it('never lets a non-admin write users or roles, whatever the role says', async () => {
      const u = await userWith({ scopes: { User: { read: 'all', create: true, edit: 'all', delete: 'all' }, Role: { read: 'all', create: true, edit: 'all' } } });
      await u.post(`${base}/User`, { userName: 'evil', password: 'x', isAdmin: true }).expect(403);
      await u.patch(`${base}/User/${u.user.id}`, { isAdmin: true }).expect(403);
      await u.patch(`${base}/Role/${u.rolesIds[0]}`, { scopes: {} }).expect(403);
      await u.get(`${base}/User/${u.user.id}`).expect(200);
    });

    it('shows rights in the session answer and filters metadata by them', async () => {
      const u = await userWith({ scopes: { Brand: { read: 'all', create: true } }, fields: { Brand: { code: { read: false } } } });
      const session = (await request(t.server).get(base === '/api' ? '/api/userSession' : '/api/v1/App/user').set('Authorization-Token', u.token).expect(200)).body;
      expect(session.user.rolesIds).toEqual(u.rolesIds);
      expect(session.acl.Brand).toEqual({ create: true, read: 'all', edit: 'no', delete: 'no', stream: false });
      expect(session.acl.Product.read).toBe('no');
      const meta = (await u.get(`${base}/metadata`).expect(200)).body;
      // Job is readable by everyone (their own jobs); nothing else the role does not mention.
      expect(Object.keys(meta.entityDefs).sort()).toEqual(['Brand', 'Job']);
      expect(meta.entityDefs.Brand.fields.code).toBeUndefined();
      expect(meta.entityDefs.Brand.fields.name).toBeDefined();
    });

    it('applies a role change at once and validates role shapes', async () => {
      const u = await userWith({ scopes: { Category: { read: 'no' } } });
      await u.get(`${base}/Category`).expect(403);
      await t.patch(`${base}/Role/${u.rolesIds[0]}`, { scopes: { Category: { read: 'all' } } }).expect(200);
      await u.get(`${base}/Category`).expect(200);
      const bad = await t.post(`${base}/Role`, { name: `bad ${base}`, scopes: { Category: { read: 'some' } } }).expect(400);
      expect(bad.body.error.code).toBe('CORE_VALIDATION_FAILED');
      await t.post(`${base}/Role`, { name: `bad2 ${base}`, fields: { Product: { price: { read: 'yes' } } } }).expect(400);
      // A misspelt entity type or field would grant or hide nothing: 400, naming it.
      const typos = await t.post(`${base}/Role`, { name: `typos ${base}`, scopes: { Prodcut: { read: 'all' } }, fields: { Product: { prcie: { read: false } }, Brnad: {} } }).expect(400);
      expect(typos.body.error.details.issues).toEqual([
        expect.objectContaining({ path: ['scopes', 'Prodcut'], code: 'unknown_entity' }),
        expect.objectContaining({ path: ['fields', 'Product', 'prcie'], code: 'unknown_field' }),
        expect.objectContaining({ path: ['fields', 'Brnad'], code: 'unknown_entity' }),
      ]);
      const role = u.rolesIds[0];
      await t.patch(`${base}/Role/${role}`, { fields: { Category: { nmae: { read: false } } } }).expect(400);
      expect((await t.get(`${base}/Role/${role}`).expect(200)).body.fields).toEqual({});
    });

    it('refuses a role that restricts a system field, which every reader sees (400 on every route)', async () => {
      // Such a rule would hide or lock nothing: createdById stayed in answers, filters and sorting.
      const fields = { Product: { createdBy: { read: false }, createdAt: { read: false }, id: { edit: false } } };
      const issues = [
        { path: ['fields', 'Product', 'createdBy'], code: 'system_field', message: "fields.Product.createdBy: 'createdBy' is a system field of Product, which no role restricts" },
        { path: ['fields', 'Product', 'createdAt'], code: 'system_field', message: "fields.Product.createdAt: 'createdAt' is a system field of Product, which no role restricts" },
        { path: ['fields', 'Product', 'id'], code: 'system_field', message: "fields.Product.id: 'id' is a system field of Product, which no role restricts" },
      ];
      const message = `Invalid role: ${issues.map((i) => i.message).join('; ')}`;
      const created = await t.post(`${base}/Role`, { name: `system ${base}`, scopes: { Product: { read: 'all' } }, fields }).expect(400);
      expect(created.body.error).toEqual({ code: 'CORE_VALIDATION_FAILED', message, details: { issues } });
      const u = await userWith({ scopes: { Product: { read: 'all' } } });
      const role = u.rolesIds[0];
      const patched = await t.patch(`${base}/Role/${role}`, { fields }).expect(400);
      expect(patched.body.error).toEqual({ code: 'CORE_VALIDATION_FAILED', message, details: { issues } });
      const upsert = await t.post(`${base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert'}`, [{ entity: 'Role', payload: { id: role, fields } }]).expect(200);
      expect(upsert.body).toEqual([{ status: 'Failed', stored: false, message }]);
      const mass = await t.post(`${base}/entityMassUpdate`, { entityName: 'Role', ids: [role], values: { fields } }).expect(200);
      expect(mass.body).toEqual({ updated: 0, errors: [{ id: role, code: 'CORE_VALIDATION_FAILED', message }] });
      expect((await t.get(`${base}/Role/${role}`).expect(200)).body.fields).toEqual({});
      // The other fields stay restrictable.
      await t.patch(`${base}/Role/${role}`, { fields: { Product: { price: { read: false }, name: { edit: false } } } }).expect(200);
    });
  });
});
