import type { Response } from 'supertest';
import { GENERATIONS, startTestApi, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { testEntities } from '../../../../test/support/fixtures';
import { userWithRole } from '../../../../test/support/users';

/** A strong entity tag: a quoted string, never `W/`. */
const STRONG = /^"[^"]+"$/;
const etag = (res: Response): string => {
  const tag = res.headers.etag as string | undefined;
  expect(tag).toMatch(STRONG);
  return tag as string;
};

/** Record versions: `ETag`, `If-Match`, `If-None-Match` (CONTRACT §16). */
describe.each(TEST_DBS)('record versions on %s', (kind) => {
  let t: TestApi;
  let cat: string;

  beforeAll(async () => {
    t = await startTestApi(kind, { entities: testEntities });
    cat = (await t.post('/api/Category', { name: 'V', code: 'versions' }).expect(200)).body.id;
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (_g, base) => {
    const update = base === '/api' ? 'patch' : 'put';

    it('carries a strong ETag on single reads and on create and update answers, the same for the same version', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Tagged' }).expect(200);
      const v1 = etag(created);
      expect(etag(await t.get(`${base}/Product/${created.body.id}`).expect(200))).toBe(v1);
      expect(etag(await t.get(`${base}/Product/${created.body.id}?select=name`).expect(200))).toBe(v1);
      for (const method of ['patch', 'put'] as const) {
        const before = etag(await t.get(`${base}/Product/${created.body.id}`).expect(200));
        const updated = await t[method](`${base}/Product/${created.body.id}`, { quantity: method === 'patch' ? 1 : 2 }).expect(200);
        const after = etag(updated);
        expect(after).not.toBe(before);
        expect(etag(await t.get(`${base}/Product/${created.body.id}`).expect(200))).toBe(after);
      }
      // an update that changes nothing keeps the version
      const same = etag(await t.get(`${base}/Product/${created.body.id}`).expect(200));
      expect(etag(await t[update](`${base}/Product/${created.body.id}`, { quantity: 2 }).expect(200))).toBe(same);
      // a list holds many versions: no strong tag of a record (the host's Express may add its own weak one)
      expect((await t.get(`${base}/Product`).expect(200)).headers.etag ?? '').not.toMatch(STRONG);
    });

    it('carries the ETag for a user who may not read every field too (the answer is a copy without them)', async () => {
      const u = await userWithRole(t, { scopes: { Product: { create: true, read: 'all', edit: 'all' } }, fields: { Product: { price: { read: false, edit: false } } } });
      const created = await u.post(`${base}/Product`, { name: 'Hidden price' }).expect(200);
      expect(created.body).not.toHaveProperty('price');
      const v1 = etag(created);
      expect(etag(await u.get(`${base}/Product/${created.body.id}`).expect(200))).toBe(v1);
      const updated = await u[update](`${base}/Product/${created.body.id}`, { name: 'Hidden price 2' }).expect(200);
      expect(etag(updated)).not.toBe(v1);
      expect(etag(await t.get(`${base}/Product/${created.body.id}`).expect(200))).toBe(etag(updated));
    });

    it('changes the ETag with every write: link routes, mass updates, upserts, deletes and restores', async () => {
      const id = (await t.post(`${base}/Product`, { name: 'Every write' }).expect(200)).body.id;
      const tags = [etag(await t.get(`${base}/Product/${id}`).expect(200))];
      const now = async () => etag(await t.get(`${base}/Product/${id}`).expect(200));
      const writes = [
        () => t.post(`${base}/Product/${id}/categories`, { id: cat }).expect(200),
        () => t.del(`${base}/Product/${id}/categories?id=${cat}`).expect(200),
        () => t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], values: { quantity: 5 } }).expect(200),
        () => t.post(`${base}/entityMassUpdate`, { entityName: 'Product', ids: [id], addLinks: { categories: [cat] } }).expect(200),
        () => t.post('/api/upsert', [{ entity: 'Product', payload: { id, quantity: 6 } }]).expect(200),
        async () => {
          await t.del(`${base}/Product/${id}`).expect(200);
          await t.post(`${base}/entityRestore`, { entityName: 'Product', ids: [id] }).expect(200);
        },
      ];
      for (const write of writes) {
        await write();
        tags.push(await now());
      }
      expect(new Set(tags).size).toBe(tags.length);
    });

    it('refuses PATCH, PUT and DELETE with another version in If-Match: 412, nothing written, nothing logged', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Guarded', price: 1 }).expect(200);
      const id = created.body.id;
      const v1 = etag(created);
      const v2 = etag(await t[update](`${base}/Product/${id}`, { price: 2 }).expect(200));
      const stale = [v1, `${v1}, "999999"`, 'W/' + v2, '"not-a-version"'];
      for (const ifMatch of stale) {
        for (const method of ['patch', 'put'] as const) {
          const res = await t[method](`${base}/Product/${id}`, { price: 3 }).set('If-Match', ifMatch).expect(412);
          expect(res.body.error).toMatchObject({ code: 'CORE_PRECONDITION_FAILED', message: expect.stringContaining(id) });
          // an error stands for no version: an ETag on it would send a retry into the same 412
          expect(res.headers.etag).toBeUndefined();
        }
        for (const permanently of ['false', 'true']) {
          const res = await t.del(`${base}/Product/${id}`).set('If-Match', ifMatch).set('permanently', permanently).expect(412);
          expect(res.body.error.code).toBe('CORE_PRECONDITION_FAILED');
        }
      }
      const now = await t.get(`${base}/Product/${id}`).expect(200);
      expect(now.body.price).toBe(2);
      expect(etag(now)).toBe(v2);
      expect((await t.get(`/api/v1/Product/${id}/stream`).expect(200)).body.total).toBe(2);
    });

    it('holds link routes to If-Match as well: 412 for another version, nothing written; the current one links', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Guarded links' }).expect(200);
      const id = created.body.id;
      const v1 = etag(created);
      const category = (await t.post(`${base}/Category`, { name: 'Guard', code: `guard-${base.length}` }).expect(200)).body.id;
      const v2 = etag(await t[update](`${base}/Product/${id}`, { price: 2 }).expect(200));
      const link = `${base}/Product/${id}/categories`;
      expect((await t.post(link, { id: category }).set('If-Match', v1).expect(412)).body.error.code).toBe('CORE_PRECONDITION_FAILED');
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body.categoriesIds).toEqual([]);
      await t.post(link, { id: category }).set('If-Match', v2).expect(200);
      await t.del(`${link}?id=${category}`).set('If-Match', v2).expect(412);
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body.categoriesIds).toEqual([category]);
      await t.del(`${link}?id=${category}`).set('If-Match', '*').expect(200);
      expect((await t.get(`${base}/Product/${id}`).expect(200)).body.categoriesIds).toEqual([]);
    });

    it('writes when If-Match names the current version, alone, in a list, or as *', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Matched', price: 1 }).expect(200);
      const id = created.body.id;
      let current = etag(created);
      for (const [i, ifMatch] of [() => current, () => `"999999", ${current}`, () => '*'].entries()) {
        const res = await t[i % 2 ? 'put' : 'patch'](`${base}/Product/${id}`, { price: 10 + i }).set('If-Match', ifMatch()).expect(200);
        expect(res.body.price).toBe(10 + i);
        expect(etag(res)).not.toBe(current);
        current = etag(res);
      }
      // an update that changes nothing still checks the version
      await t[update](`${base}/Product/${id}`, { price: 12 }).set('If-Match', current).expect(200);
      await t.del(`${base}/Product/${id}`).set('If-Match', `"1", ${current}`).expect(200, 'true');
      await t.get(`${base}/Product/${id}`).expect(404);
    });

    it('answers 404 before any precondition for a record that does not exist', async () => {
      for (const ifMatch of ['*', '"1"']) {
        expect((await t.patch(`${base}/Product/nothing-here`, { price: 1 }).set('If-Match', ifMatch).expect(404)).body.error.code).toBe('CORE_NOT_FOUND');
        await t.del(`${base}/Product/nothing-here`).set('If-Match', ifMatch).expect(404);
      }
    });

    it('answers a GET with a matching If-None-Match by 304 without a body, otherwise 200', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Cached' }).expect(200);
      const id = created.body.id;
      const v1 = etag(created);
      for (const ifNoneMatch of [v1, `W/${v1}`, `"999999", ${v1}`, '*']) {
        const res = await t.get(`${base}/Product/${id}`).set('If-None-Match', ifNoneMatch).expect(304);
        expect(res.text ?? '').toBe('');
        expect(res.headers.etag).toBe(v1);
      }
      await t.patch(`${base}/Product/${id}`, { name: 'Cached 2' }).expect(200);
      const fresh = await t.get(`${base}/Product/${id}`).set('If-None-Match', v1).expect(200);
      expect(fresh.body.name).toBe('Cached 2');
      expect(etag(fresh)).not.toBe(v1);
      // a hidden or missing record is 404, not 304
      await t.get(`${base}/Product/nothing-here`).set('If-None-Match', '*').expect(404);
    });

    it('answers a GET whose If-Match names none of the versions with 412 (RFC 9110), before If-None-Match; a matching one reads', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Read if' }).expect(200);
      const id = created.body.id;
      const v1 = etag(created);
      for (const ifMatch of ['"999999"', `W/${v1}`]) {
        const res = await t.get(`${base}/Product/${id}`).set('If-Match', ifMatch).expect(412);
        expect(res.body.error.code).toBe('CORE_PRECONDITION_FAILED');
        expect(res.headers['x-status-reason']).toContain('If-Match');
        // If-Match is judged first: a stale one is 412 even when If-None-Match would give 304
        await t.get(`${base}/Product/${id}`).set('If-Match', ifMatch).set('If-None-Match', v1).expect(412);
      }
      for (const ifMatch of [v1, '*', `"999999", ${v1}`]) {
        expect((await t.get(`${base}/Product/${id}`).set('If-Match', ifMatch).expect(200)).body.name).toBe('Read if');
      }
      await t.get(`${base}/Product/${id}`).set('If-Match', v1).set('If-None-Match', v1).expect(304);
      // a hidden or missing record is 404 whatever If-Match says (no existence oracle)
      await t.get(`${base}/Product/nothing-here`).set('If-Match', '"1"').expect(404);
      const u = await userWithRole(t, { scopes: { Product: { read: 'own' } } });
      await u.get(`${base}/Product/${id}`).set('If-Match', '"999999"').expect(404);
    });

    it('tells caches that a record answer depends on the caller and the shaping headers, and to check it again before use', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Vary' }).expect(200);
      const read = await t.get(`${base}/Product/${created.body.id}`).expect(200);
      const notModified = await t.get(`${base}/Product/${created.body.id}`).set('If-None-Match', etag(read)).expect(304);
      const updated = await t[update](`${base}/Product/${created.body.id}`, { name: 'Vary 2' }).expect(200);
      for (const res of [created, read, notModified, updated]) {
        const vary = String(res.headers.vary).split(',').map((v) => v.trim().toLowerCase());
        expect(vary).toEqual(expect.arrayContaining(['authorization-token', 'cookie', 'language', 'with-meta', 'flatten-attributes']));
        expect(res.headers['cache-control']).toBe('private, no-cache');
      }
    });

    it('keeps every authenticated answer to its caller: lists, linked lists, metadata, link writes, deletes and errors carry the same Vary and Cache-Control', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Kept' }).expect(200);
      const linked = base === '/api' ? `/api/entityRelation?entityName=Product&id=${created.body.id}&link=categories` : `/api/v1/Product/${created.body.id}/categories`;
      const answers: [string, Response][] = [
        ['list', await t.get(`${base}/Product`).expect(200)],
        ['total', await t.get(`${base}/Product?totalOnly=true`).expect(200)],
        ['linked', await t.get(linked).expect(200)],
        ['metadata', await t.get(base === '/api' ? '/api/metadata' : '/api/v1/Metadata').expect(200)],
        ['link', await t.post(`${base}/Product/${created.body.id}/categories`, { id: cat }).expect(200)],
        ['upsert', await t.post(base === '/api' ? '/api/upsert' : '/api/v1/MassActions/action/upsert', [{ entity: 'Product', payload: { name: 'Kept too' } }]).expect(200)],
        ['error', await t.get(`${base}/Product/nothing-here`).expect(404)],
        ['delete', await t.del(`${base}/Product/${created.body.id}`).expect(200)],
      ];
      for (const [name, res] of answers) {
        const vary = String(res.headers.vary).split(',').map((v) => v.trim().toLowerCase());
        expect({ name, vary }).toEqual({ name, vary: expect.arrayContaining(['authorization-token', 'cookie', 'language', 'with-meta', 'flatten-attributes']) });
        expect({ name, cacheControl: res.headers['cache-control'] }).toEqual({ name, cacheControl: 'private, no-cache' });
      }
    });

    it('refuses a write whose If-None-Match names the current version or * (412, nothing written, nothing logged); another version writes', async () => {
      const created = await t.post(`${base}/Product`, { name: 'Not again', price: 1 }).expect(200);
      const id = created.body.id;
      const v1 = etag(created);
      const category = (await t.post(`${base}/Category`, { name: 'None match', code: `none-match-${base.length}` }).expect(200)).body.id;
      const writes: [string, () => ReturnType<TestApi['get']>][] = [
        ['patch', () => t.patch(`${base}/Product/${id}`, { price: 2 })],
        ['put', () => t.put(`${base}/Product/${id}`, { price: 2 })],
        ['link', () => t.post(`${base}/Product/${id}/categories`, { id: category })],
        ['unlink', () => t.del(`${base}/Product/${id}/categories?id=${category}`)],
        ['delete', () => t.del(`${base}/Product/${id}`)],
        ['delete permanently', () => t.del(`${base}/Product/${id}`).set('permanently', 'true')],
      ];
      for (const ifNoneMatch of [v1, `W/${v1}`, `"999999", ${v1}`, '*']) {
        for (const [name, write] of writes) {
          const res = await write().set('If-None-Match', ifNoneMatch);
          expect({ name, ifNoneMatch, status: res.status, code: res.body.error?.code }).toEqual({ name, ifNoneMatch, status: 412, code: 'CORE_PRECONDITION_FAILED' });
        }
      }
      const now = await t.get(`${base}/Product/${id}`).expect(200);
      expect(now.body).toMatchObject({ price: 1, categoriesIds: [] });
      expect(etag(now)).toBe(v1);
      expect((await t.get(`/api/v1/Product/${id}/stream`).expect(200)).body.total).toBe(1);
      // another version than the current one: the write is made
      const updated = await t[update](`${base}/Product/${id}`, { price: 3 }).set('If-None-Match', '"999999"').expect(200);
      expect(etag(updated)).not.toBe(v1);
      await t.post(`${base}/Product/${id}/categories`, { id: category }).set('If-None-Match', v1).expect(200);
      await t.del(`${base}/Product/${id}`).set('If-None-Match', v1).expect(200, 'true');
      // a record the caller cannot see is left to the write: 404 as without the header
      await t.patch(`${base}/Product/nothing-here`, { price: 1 }).set('If-None-Match', '*').expect(404);
    });

    it('judges the caller’s rights before If-Match: no right is 403 whatever the version', async () => {
      const reader = await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'no', delete: 'no' } } });
      const created = await t.post(`${base}/Product`, { name: 'Not yours' }).expect(200);
      for (const ifMatch of ['"999999"', etag(created)]) {
        expect((await reader.patch(`${base}/Product/${created.body.id}`, { name: 'x' }).set('If-Match', ifMatch).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
        expect((await reader.del(`${base}/Product/${created.body.id}`).set('If-Match', ifMatch).expect(403)).body.error.code).toBe('CORE_FORBIDDEN');
      }
    });

    it('judges a field the caller may not edit before If-Match: 403 whatever the version', async () => {
      const editor = await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'all' } }, fields: { Product: { price: { edit: false } } } });
      const created = await t.post(`${base}/Product`, { name: 'Locked price' }).expect(200);
      for (const ifMatch of ['"999999"', etag(created)]) {
        const res = await editor[update](`${base}/Product/${created.body.id}`, { price: 2 }).set('If-Match', ifMatch).expect(403);
        expect(res.body.error.message).toBe('Not allowed to edit Product.price');
      }
    });

    it('logs concurrent updates of one record as a chain: each diff starts where the one before ended, and an update that changes nothing logs nothing', async () => {
      const { id } = (await t.post(`${base}/Product`, { name: 'Raced' }).expect(200)).body;
      await Promise.all(Array.from({ length: 6 }, () => t[update](`${base}/Product/${id}`, { quantity: 7 }).expect(200)));
      await Promise.all(Array.from({ length: 6 }, (_, i) => t[update](`${base}/Product/${id}`, { price: i + 1 }).expect(200)));
      const changes = (await t.get(`/api/v1/Product/${id}/stream?maxSize=50`).expect(200)).body.list.reverse();
      const updates = changes.filter((c: { action: string }) => c.action === 'Update');
      expect(updates.filter((c: { diff: Record<string, unknown> }) => 'quantity' in c.diff)).toEqual([expect.objectContaining({ diff: { quantity: { was: null, became: 7 } } })]);
      const prices = updates.filter((c: { diff: Record<string, unknown> }) => 'price' in c.diff).map((c: { diff: { price: { was: unknown; became: unknown } } }) => c.diff.price);
      expect(prices.length).toBeGreaterThan(0);
      for (const [i, step] of prices.entries()) expect(step.was).toBe(i === 0 ? null : prices[i - 1].became);
      // One version per change that was logged (the create's, then one per update).
      expect(etag(await t.get(`${base}/Product/${id}`).expect(200))).toBe(`"${1 + updates.length}"`);
    });
  });
});
