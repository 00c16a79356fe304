import { defineEntity } from '@entity-records/core';
import type request from 'supertest';
import { GENERATIONS, startTestApi, type Requests, type TestApi } from '../../../../test/support/api';
import { TEST_DBS } from '../../../../test/support/databases';
import { userWithRole } from '../../../../test/support/users';

/**
 * `If-None-Match` on a write (PATCH, PUT, DELETE, the link routes, the attribute endpoints) is a
 * precondition like `If-Match`: judged after the rights and the body (RFC 9110 §13.2.1; CONTRACT
 * §15: a field the role may not edit is 403 before any comparison with the stored record). A write
 * the role may not make is 403, and a bad body 400, whatever version the header names.
 */
const Category = defineEntity({
  name: 'Category',
  fields: { name: { type: 'varchar', required: true }, products: { type: 'linkMultiple', entity: 'Product', foreign: 'categories' } },
});
const Product = defineEntity({
  name: 'Product',
  hasAttributes: true,
  fields: {
    name: { type: 'varchar', required: true },
    price: { type: 'float' },
    categories: { type: 'linkMultiple', entity: 'Category', foreign: 'products' },
  },
});

type Answer = [status: number, code: string | undefined, message: string | undefined];
const answer = (res: request.Response): Answer => [res.status, res.body.error?.code, res.body.error?.message];

describe.each(TEST_DBS)('If-None-Match on writes after the rights, on %s', (kind) => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi(kind, { entities: [Category, Product] });
  });
  afterAll(() => t.close());

  describe.each(GENERATIONS)('generation %s', (g, base) => {
    /** The writes of one product by every route that takes `If-None-Match`, each with `header`. */
    const writes = (client: Requests, { id, category }: { id: string; category: string }, header: string) => [
      client.patch(`${base}/Product/${id}`, { price: 1 }).set('If-None-Match', header),
      client.put(`${base}/Product/${id}`, { price: 1 }).set('If-None-Match', header),
      client.post(`${base}/Product/${id}/categories`, { id: category }).set('If-None-Match', header),
      client.del(`${base}/Product/${id}`).set('If-None-Match', header),
    ];

    it('answers what the role may not do 403, and a bad body 400, whatever If-None-Match names', async () => {
      const category = (await t.post(`${base}/Category`, { name: 'C' }).expect(200)).body.id as string;
      const created = await t.post(`${base}/Product`, { name: 'P' }).expect(200);
      const id = created.body.id as string;
      const user = await userWithRole(t, {
        scopes: { Product: { read: 'all', edit: 'all', delete: 'no' }, Category: { read: 'all', edit: 'all' } },
        fields: { Product: { price: { edit: false }, categories: { edit: false } } },
      });
      for (const header of ['*', created.headers.etag as string]) {
        const answers = await Promise.all(writes(user, { id, category }, header));
        expect(answers.map(answer)).toEqual([
          [403, 'CORE_FORBIDDEN', 'Not allowed to edit Product.price'],
          [403, 'CORE_FORBIDDEN', 'Not allowed to edit Product.price'],
          [403, 'CORE_FORBIDDEN', 'Not allowed to edit Product.categories'],
          [403, 'CORE_FORBIDDEN', 'Not allowed to delete Product'],
        ]);
        const bad = [
          await t.patch(`${base}/Product/${id}`, { nope: 1 }).set('If-None-Match', header),
          await t.post(`${base}/Product/${id}/addAttributes`, { attributeIds: ['nope'] }).set('If-None-Match', header),
          await t.post(`${base}/Product/${id}/categories`, { id: 5 }).set('If-None-Match', header),
        ];
        expect(bad.map((res) => [res.status, res.body.error?.code])).toEqual([
          [400, 'CORE_UNKNOWN_FIELD'],
          [400, 'CORE_VALIDATION_FAILED'],
          [400, 'CORE_VALIDATION_FAILED'],
        ]);
      }
      // A write the role may make, at a version named, is still 412 and writes nothing; past it, it writes.
      const editor = await userWithRole(t, { scopes: { Product: { read: 'all', edit: 'all', delete: 'all' }, Category: { read: 'all', edit: 'all' } } });
      for (const header of ['*', created.headers.etag as string]) {
        const answers = await Promise.all(writes(editor, { id, category }, header));
        expect(answers.map((res) => [res.status, res.body.error?.code])).toEqual(Array(4).fill([412, 'CORE_PRECONDITION_FAILED']));
      }
      const after = await t.get(`${base}/Product/${id}`).expect(200);
      expect(after.headers.etag).toBe(created.headers.etag);
      expect(after.body).toMatchObject({ price: null, categoriesIds: [] });
      const written = await editor.patch(`${base}/Product/${id}`, { price: 2 }).set('If-None-Match', '"99"').expect(200);
      expect(written.headers.etag).not.toBe(created.headers.etag);
    });
  });
});
