// A client of the PIM example written against types generated from its OpenAPI document
// (openapi-typescript, into ./pim-api.d.ts) and run with openapi-fetch. The generated-client test
// type-checks this file against the generated types, then runs it against a live server.
import createClient from 'openapi-fetch';
import type { paths } from './pim-api';

export interface Admin {
  userName: string;
  password: string;
}

/** Signs in, writes and reads through the typed client, and returns what the server answered. */
export async function exercise(baseUrl: string, admin: Admin) {
  const client = createClient<paths>({ baseUrl });
  const basic = `Basic ${Buffer.from(`${admin.userName}:${admin.password}`).toString('base64')}`;
  const session = await client.GET('/api/v1/App/user', { params: { header: { 'Authorization-Token-Only': 'true' } }, headers: { Authorization: basic } });
  const token = session.data?.authorizationToken;
  if (!token) throw new Error(`sign-in failed: ${session.response.status}`);
  client.use({
    onRequest({ request }) {
      request.headers.set('Authorization-Token', token);
      return request;
    },
  });

  const brand = await client.POST('/api/Brand', { body: { name: 'Generated', code: 'GEN' } });
  const brandId = brand.data?.id ?? '';
  const product = await client.POST('/api/v1/Product', { body: { name: 'Typed', sku: 'T-1', price: 2.5, quantity: 3, brandId } });
  const productId = product.data?.id ?? '';
  const updated = await client.PUT('/api/v1/Product/{id}', { params: { path: { id: productId } }, body: { price: 3.5 } });
  const patched = await client.PATCH('/api/Product/{id}', { params: { path: { id: productId } }, body: { isActive: false } });
  const list = await client.GET('/api/Product', { params: { query: { select: 'name,price,brandName', maxSize: 10, sortBy: 'name', asc: true } } });
  const german = await client.GET('/api/v1/Product/{id}', { params: { path: { id: productId }, header: { language: 'de_DE', 'With-Meta': 'true' } } });
  const upsert = await client.POST('/api/upsert', { body: [{ entity: 'Brand', payload: { name: 'Generated', code: 'GEN-2' } }] });
  const missing = await client.GET('/api/Product/{id}', { params: { path: { id: 'no-such-product' } } });
  const removed = await client.DELETE('/api/Brand/{id}', { params: { path: { id: brandId } } });

  return {
    brand: brand.data,
    product: product.data,
    updated: updated.data,
    patched: patched.data,
    list: list.data,
    german: german.data,
    upsert: upsert.data,
    missing: { status: missing.response.status, error: missing.error },
    removed: removed.data,
  };
}
