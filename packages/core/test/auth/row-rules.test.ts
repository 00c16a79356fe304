import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { defineEntity, systemContext, type EntityApi, type RequestContext, type RowRule } from '@entity-records/core';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { finishedJob } from '../../../../test/support/jobs';
import { openSse } from '../../../../test/support/sse';
import { userWithRole, type UserClient } from '../../../../test/support/users';

/**
 * Row rules: a tenant sees and writes only the rows of its tenant, on every read and write route.
 * The tenant of a user is looked up in the database (a Membership record), as a host would.
 */

declare module '@entity-records/core' {
  interface RequestContextVariables {
    /** The caller's tenant, as the row rule found it. */
    tenant?: string | null;
  }
}

let api: EntityApi | undefined;
/** How often the row rules were asked (once per request and entity type). */
let ruleCalls = 0;
/** Ids the `afterUpdate` hook of the definition saw. */
const updatedIds: string[] = [];

async function tenantOf(ctx: RequestContext): Promise<string | undefined> {
  const page = await (api as EntityApi).repository('Membership').find(systemContext(), {
    where: [{ type: 'equals', attribute: 'userId', value: ctx.user?.id ?? '' }],
    select: ['tenant'],
    maxSize: 1,
    collectionOnly: true,
  });
  return page.list?.[0]?.tenant as string | undefined;
}

/**
 * Admins see every tenant; a user without a tenant sees nothing. The rule keeps the tenant it
 * found in the request context, for the hooks.
 */
async function tenantRule(ctx: RequestContext): Promise<RowRule> {
  ruleCalls++;
  if (ctx.user?.isAdmin) return true;
  ctx.variables.tenant ??= (await tenantOf(ctx)) ?? null;
  return ctx.variables.tenant === null ? false : { type: 'equals', attribute: 'tenantId', value: ctx.variables.tenant };
}

/**
 * New records get the caller's tenant unless the body names one. The rules ran before (also for
 * the link targets of a write, before its transaction): the hook reads no database, which a hook
 * of a record made for a link object must not do (it runs inside the write's transaction).
 */
const hooks = {
  beforeCreate({ ctx, data }: { ctx: RequestContext; data?: Record<string, unknown> }) {
    if (data && data.tenantId === undefined && !ctx.user?.isAdmin) data.tenantId = ctx.variables.tenant ?? null;
  },
};

const Membership = defineEntity({ name: 'Membership', fields: { user: { type: 'link', entity: 'User' }, tenant: { type: 'varchar' } } });
const Supplier = defineEntity({
  name: 'Supplier',
  fields: {
    name: { type: 'varchar', required: true },
    tenantId: { type: 'varchar' },
    items: { type: 'linkMultiple', entity: 'Item', foreign: 'supplier' },
  },
  access: tenantRule,
  hooks,
});
const Item = defineEntity({
  name: 'Item',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true },
    sku: { type: 'varchar', unique: true },
    tenantId: { type: 'varchar' },
    price: { type: 'float' },
    supplier: { type: 'link', entity: 'Supplier' },
  },
  access: tenantRule,
  hooks: { ...hooks, afterUpdate: ({ id }) => void updatedIds.push(id as string) },
});

/** No row rules of its own: its links are judged by those of their targets alone. */
const Note = defineEntity({ name: 'Note', fields: { text: { type: 'varchar' }, supplier: { type: 'link', entity: 'Supplier' } } });

const FULL = { create: true, read: 'all', edit: 'all', delete: 'all', stream: true };

describe.each(TEST_DBS)('row rules on %s', (kind) => {
  let t: TestApi;
  let server: http.Server;
  let url: string;
  let a: UserClient;
  let b: UserClient;
  let none: UserClient;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Membership, Supplier, Item, Note] });
    api = t.api;
    const role = { scopes: { Item: FULL, Supplier: FULL, Note: FULL } };
    [a, b, none] = [await userWithRole(t, role), await userWithRole(t, role), await userWithRole(t, role)];
    await t.post('/api/Membership', { userId: a.user.id, tenant: 'A' }).expect(200);
    await t.post('/api/Membership', { userId: b.user.id, tenant: 'B' }).expect(200);
    server = http.createServer(t.app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  describe.each(GENERATIONS)('generation %s', (gen, base) => {
    const update = (client: UserClient, path: string, body: unknown) => (gen === 'A' ? client.patch(path, body) : client.put(path, body));
    let n = 0;
    /** Each tenant's supplier and item, new for each test. */
    async function world() {
      n++;
      const sku = (tenant: string) => `${kind}-${gen}-${n}-${tenant}`;
      const sA = (await a.post(`${base}/Supplier`, { name: `Supplier A ${gen}${n}` }).expect(200)).body;
      const sB = (await b.post(`${base}/Supplier`, { name: `Supplier B ${gen}${n}` }).expect(200)).body;
      const iA = (await a.post(`${base}/Item`, { name: 'Item A', sku: sku('A'), price: 10, supplierId: sA.id }).expect(200)).body;
      const iB = (await b.post(`${base}/Item`, { name: 'Item B', sku: sku('B'), price: 20, supplierId: sB.id }).expect(200)).body;
      const prefix = `${kind}-${gen}-${n}-`;
      const listOf = async (client: UserClient | TestApi) =>
        (await client.get(`${base}/Item?where[0][type]=startsWith&where[0][attribute]=sku&where[0][value]=${prefix}`).expect(200)).body;
      return { sA, sB, iA, iB, prefix, listOf };
    }
    /** The record as the admin reads it (what is stored). */
    const stored = async (entity: string, id: string) => (await t.get(`${base}/${entity}/${id}`).expect(200)).body;

    it('a tenant sees only its rows in lists, totals, single reads and linked records; admins see all', async () => {
      const { sA, sB, iA, iB, listOf } = await world();
      expect(iA.tenantId).toBe('A');
      expect(iB.tenantId).toBe('B');
      const pageA = await listOf(a);
      expect(pageA.total).toBe(1);
      expect(pageA.list.map((r: { id: string }) => r.id)).toEqual([iA.id]);
      expect((await listOf(b)).list.map((r: { id: string }) => r.id)).toEqual([iB.id]);
      expect((await listOf(none)).total).toBe(0);
      expect((await listOf(t)).total).toBe(2);
      const countOnly = await a.get(`${base}/Item?totalOnly=true&where[0][type]=equals&where[0][attribute]=sku&where[0][value]=${iB.sku}`).expect(200);
      expect(countOnly.body).toEqual({ total: 0 });

      await a.get(`${base}/Item/${iA.id}`).expect(200);
      const hidden = await a.get(`${base}/Item/${iB.id}`).expect(404);
      const missing = await a.get(`${base}/Item/no-such-item`).expect(404);
      expect(hidden.body.error.code).toBe(missing.body.error.code);
      expect(hidden.body.error.message).toBe(`Item '${iB.id}' not found`);

      // Linked records: of a hidden record 404; the linked records of one's own, with the target's rules.
      await a.get(`/api/entityRelation?entityName=Supplier&id=${sB.id}&link=items`).expect(404);
      const linked = (await a.get(`/api/entityRelation?entityName=Supplier&id=${sA.id}&link=items`).expect(200)).body;
      expect(linked.list.map((r: { id: string }) => r.id)).toEqual([iA.id]);
      // A record of another tenant moved under one's supplier stays hidden in its linked records.
      await t.patch(`/api/Item/${iB.id}`, { supplierId: sA.id }).expect(200);
      const moved = (await a.get(`/api/entityRelation?entityName=Supplier&id=${sA.id}&link=items`).expect(200)).body;
      expect(moved).toMatchObject({ total: 1, list: [{ id: iA.id }] });
    });

    it('asks the row rules once per request and entity type', async () => {
      await world();
      const before = ruleCalls;
      await a.get(`${base}/Item?maxSize=5`).expect(200);
      expect(ruleCalls - before).toBe(1);
    });

    it("updates, deletes, restores, links, streams and listening of another tenant's record are 404 and change nothing", async () => {
      const { sA, sB, iA, iB } = await world();
      const b0 = await stored('Item', iB.id);
      const r1 = await update(a, `${base}/Item/${iB.id}`, { price: 1 }).expect(404);
      expect(r1.body.error.code).toBe('CORE_NOT_FOUND');
      await a.del(`${base}/Item/${iB.id}`).expect(404);
      await a.del(`${base}/Item/${iB.id}`).set('permanently', 'true').expect(404);
      await a.post(`${base}/Supplier/${sB.id}/items`, { id: iA.id }).expect(404);
      await a.post(`${base}/Item/${iB.id}/supplier`, { id: sA.id }).expect(404);
      await a.get(`${base}/entityStream?entityName=Item&id=${iB.id}`).expect(404);
      await a.post(`${base}/startEntityListening`, { entityName: 'Item', entityId: iB.id }).expect(404);
      await a.get(`${base}/entityStream?entityName=Item&id=${iA.id}`).expect(200);
      expect(await stored('Item', iB.id)).toEqual(b0);

      // A soft-deleted record of another tenant is not found by a restore, nor by a permanent delete.
      await b.del(`${base}/Item/${iB.id}`).expect(200);
      const restore = (await a.post(`${base}/entityRestore`, { entityName: 'Item', ids: [iB.id] }).expect(200)).body;
      expect(restore).toEqual({ restored: 0, errors: [{ id: iB.id, code: 'CORE_NOT_FOUND', message: `Item '${iB.id}' not found` }] });
      await a.del(`${base}/Item/${iB.id}`).set('permanently', 'true').expect(404);
      await b.post(`${base}/entityRestore`, { entityName: 'Item', ids: [iB.id] }).expect(200, { restored: 1, errors: [] });
      expect(await stored('Item', iB.id)).toMatchObject({ price: 20, tenantId: 'B' });
    });

    it("the attribute endpoints and flattened attribute writes on another tenant's record are 404 and change nothing", async () => {
      const { iA, iB } = await world();
      const code = `note_${kind}_${gen}_${n}`;
      const attr = (await t.post(`${base}/Attribute`, { entityType: 'Item', name: code, code, type: 'varchar' }).expect(200)).body.id;
      const FLAT = { 'Flatten-Attributes': 'true' };
      const tries = (id: string) => [
        a.get(`${base}/Item/${id}/attributeValues`),
        a.post(`${base}/Item/${id}/addAttributes`, { attributeIds: [attr] }),
        a.post(`${base}/Item/${id}/upsertAttributeValues`, [{ attributeId: attr, value: 'from A' }]),
        a.del(`${base}/Item/${id}/attributeValues`).send({ attributeIds: [attr] }),
        update(a, `${base}/Item/${id}`, { [code]: 'flat from A' }).set(FLAT),
      ];
      for (const res of await Promise.all(tries(iB.id))) expect(res.status).toBe(404);
      expect((await t.get(`${base}/Item/${iB.id}/attributeValues`).expect(200)).body).toEqual([]);
      // the same requests on the tenant's own record are served
      for (const res of await Promise.all(tries(iA.id).slice(0, 3))) expect(res.status).toBe(200);
      await update(a, `${base}/Item/${iA.id}`, { [code]: 'flat from A' }).set(FLAT).expect(200);
      const own = (await t.get(`${base}/Item/${iA.id}/attributeValues`).expect(200)).body;
      expect(own).toEqual([expect.objectContaining({ attributeId: attr, value: 'flat from A' })]);
    });

    it('a mass update changes only rows of the tenant, by ids and by where', async () => {
      const { sA, sB, iA, iB, prefix } = await world();
      const res = (await a.post(`${base}/entityMassUpdate`, { entityName: 'Item', ids: [iA.id, iB.id], values: { price: 7 } }).expect(200)).body;
      expect(res).toEqual({ updated: 1, errors: [{ id: iB.id, code: 'CORE_NOT_FOUND', message: `Item '${iB.id}' not found` }] });
      expect((await stored('Item', iA.id)).price).toBe(7);
      expect((await stored('Item', iB.id)).price).toBe(20);
      const where = [{ type: 'startsWith', attribute: 'sku', value: prefix }];
      const { jobId } = (await a.post(`${base}/entityMassUpdate`, { entityName: 'Item', where, values: { price: 8 } }).expect(200)).body;
      const job = await finishedJob(a, { base, id: jobId });
      expect(job).toMatchObject({ status: 'Success', result: { updated: 1, errors: [] } });
      expect((await stored('Item', iA.id)).price).toBe(8);
      expect((await stored('Item', iB.id)).price).toBe(20);
      // Links added by a mass update, item by item: to the tenant's records only.
      const extra = (await a.post(`${base}/Item`, { name: 'Extra A', sku: `${prefix}extra` }).expect(200)).body;
      const linked = (await a.post(`${base}/entityMassUpdate`, { entityName: 'Supplier', ids: [sA.id, sB.id], values: {}, addLinks: { items: [extra.id] } }).expect(200)).body;
      expect(linked).toEqual({ updated: 1, errors: [{ id: sB.id, code: 'CORE_NOT_FOUND', message: `Supplier '${sB.id}' not found` }] });
      expect((await stored('Item', extra.id)).supplierId).toBe(sA.id);
    });

    it("an upsert item keyed to another tenant's row fails as a collision and changes nothing", async () => {
      const { iB, prefix } = await world();
      const b0 = await stored('Item', iB.id);
      const items = [
        { entity: 'Item', payload: { sku: iB.sku, name: 'Taken', price: 1 } },
        // Judged as the create it would be (a name is required), then colliding with the row it cannot see.
        { entity: 'Item', payload: { id: iB.id, name: 'Taken by id', price: 1 } },
        { entity: 'Item', payload: { sku: `${prefix}new`, name: 'New A' } },
        { entity: 'Item', payload: { sku: `${prefix}new-b`, name: 'New in B', tenantId: 'B' } },
      ];
      const results = (await a.post(`${base}/upsert`, items).expect(200)).body;
      expect(results.map((r: { status: string }) => r.status)).toEqual(['Failed', 'Failed', 'Created', 'Failed']);
      expect(results[0].message).toBe('Item with the same sku already exists');
      expect(results[1].message).toBe('Item with the same id already exists');
      expect(results[2].entity).toMatchObject({ sku: `${prefix}new`, tenantId: 'A' });
      expect(results[3].message).toBe('The Item would be outside the records you may access');
      expect(await stored('Item', iB.id)).toEqual(b0);
      expect((await t.get(`${base}/Item?totalOnly=true&where[0][type]=equals&where[0][attribute]=sku&where[0][value]=${prefix}new-b`)).body.total).toBe(0);
      // The same items as a job: the same results.
      const { jobId } = (await a.post(`${base}/upsertAsync`, items.slice(0, 2)).expect(200)).body;
      const job = await finishedJob(a, { base, id: jobId });
      expect(job.result).toEqual(results.slice(0, 2));
      expect(await stored('Item', iB.id)).toEqual(b0);
      // The same request as a plain create: the same unique error, nothing more.
      const plain = await a.post(`${base}/Item`, { sku: iB.sku, name: 'Taken' }).expect(409);
      expect(plain.body.error.message).toBe('Item with the same sku already exists');
    });

    it('a create or update that would leave the tenant is refused and stores nothing', async () => {
      const { iA, prefix } = await world();
      const outside = await a.post(`${base}/Item`, { name: 'Smuggled', sku: `${prefix}smuggled`, tenantId: 'B' }).expect(403);
      expect(outside.body.error).toMatchObject({ code: 'CORE_OUTSIDE_ROW_RULES', message: 'The Item would be outside the records you may access' });
      const moved = await update(a, `${base}/Item/${iA.id}`, { tenantId: 'B', price: 99 }).expect(403);
      expect(moved.body.error.code).toBe('CORE_OUTSIDE_ROW_RULES');
      expect(await stored('Item', iA.id)).toMatchObject({ tenantId: 'A', price: 10 });
      // A record made for a link object is judged too, and takes the whole write back with it.
      await a.post(`${base}/Item`, { name: 'With new supplier', sku: `${prefix}linked`, supplier: { name: `Elsewhere ${prefix}`, tenantId: 'B' } }).expect(403);
      await none.post(`${base}/Item`, { name: 'Nobody', sku: `${prefix}nobody` }).expect(403);
      const left = (await t.get(`${base}/Item?where[0][type]=in&where[0][attribute]=sku&where[0][value][]=${prefix}smuggled&where[0][value][]=${prefix}linked&where[0][value][]=${prefix}nobody`).expect(200)).body;
      expect(left.total).toBe(0);
      const suppliers = (await t.get(`${base}/Supplier?totalOnly=true&where[0][type]=equals&where[0][attribute]=name&where[0][value]=Elsewhere ${prefix}`).expect(200)).body;
      expect(suppliers.total).toBe(0);
    });

    it("a link to another tenant's record is refused as a missing one; a link object never finds it", async () => {
      const { sB, iA, iB, prefix } = await world();
      const hidden = await a.post(`${base}/Item`, { name: 'Linked', sku: `${prefix}l1`, supplierId: sB.id }).expect(400);
      const missing = await a.post(`${base}/Item`, { name: 'Linked', sku: `${prefix}l1`, supplierId: 'no-such-supplier' }).expect(400);
      expect(hidden.body.error).toEqual({ ...missing.body.error, message: `Supplier '${sB.id}' not found (supplierId)`, details: { ...missing.body.error.details, ids: [sB.id] } });
      const route = await a.post(`${base}/Supplier/${iA.supplierId}/items`, { id: iB.id }).expect(400);
      expect(route.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message: `Item '${iB.id}' not found (itemsIds)` });
      expect((await stored('Item', iB.id)).supplierId).toBe(sB.id);
      // A link object naming the other tenant's supplier makes a new one, of the own tenant.
      const made = (await a.post(`${base}/Item`, { name: 'Found or made', sku: `${prefix}l2`, supplier: { name: sB.name } }).expect(200)).body;
      expect(made.supplierId).not.toBe(sB.id);
      expect(await stored('Supplier', made.supplierId)).toMatchObject({ name: sB.name, tenantId: 'A' });
    });

    it("a record without row rules of its own cannot link to another tenant's record either: a target under row rules is checked before the insert, not by it", async () => {
      const { sA, sB } = await world();
      const hidden = await a.post(`${base}/Note`, { text: 'hidden', supplierId: sB.id }).expect(400);
      expect(hidden.body.error).toMatchObject({ code: 'CORE_INVALID_LINK', message: `Supplier '${sB.id}' not found (supplierId)` });
      expect((await t.get(`${base}/Note?where[0][type]=equals&where[0][attribute]=text&where[0][value]=hidden`).expect(200)).body.total).toBe(0);
      const own = await a.post(`${base}/Note`, { text: 'own', supplierId: sA.id }).expect(200);
      expect(own.body).toMatchObject({ supplierId: sA.id, supplierName: sA.name });
      // The admin reads every tenant: the same link is its to make.
      await t.post(`${base}/Note`, { text: 'admin', supplierId: sB.id }).expect(200);
    });

    it('server-sent events show only changes of rows of the tenant', async () => {
      const { iA, iB } = await world();
      const events = await openSse(`${url}${base}/events?entityName=Item`, { 'Authorization-Token': a.token });
      try {
        expect(events.status).toBe(200);
        await update(b, `${base}/Item/${iB.id}`, { price: 21 }).expect(200);
        await update(a, `${base}/Item/${iA.id}`, { price: 11 }).expect(200);
        const seen = await events.next((e) => JSON.parse(e.data).recordId === iA.id);
        expect(JSON.parse(seen.data)).toMatchObject({ entityType: 'Item', action: 'Update', diff: { price: { was: 10, became: 11 } } });
        expect(events.events.map((e) => JSON.parse(e.data).recordId)).not.toContain(iB.id);
      } finally {
        events.close();
      }
    });

    it('runs the hooks a definition declares', async () => {
      const { iA } = await world();
      await update(a, `${base}/Item/${iA.id}`, { price: 12 }).expect(200);
      expect(updatedIds).toContain(iA.id);
    });
  });

  it('a rule that is no valid where is a 500, not a client error', async () => {
    const Broken = defineEntity({ name: 'Broken', fields: { name: { type: 'varchar' } }, access: () => ({ type: 'equals', attribute: 'tenant', value: 'x' }) });
    const other = await startTestApi(kind, { entities: [Broken] });
    try {
      const user = await userWithRole(other, { scopes: { Broken: FULL } });
      const res = await request(other.server).get('/api/Broken').set('Authorization-Token', user.token).expect(500);
      expect(res.body.error.code).toBe('CORE_INTERNAL');
    } finally {
      await other.close();
    }
  });
});
