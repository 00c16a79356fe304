/**
 * The floor of the PIM example: a bare `node:http` + `pg` server that answers the bench's requests
 * with the same SQL text and bindings our server sends (list.ts checks this before measuring) and
 * the same JSON. It does only what the answer needs: one cached token check, hand-written SQL,
 * JSON.stringify (bare-http.ts).
 */
import { randomUUID } from 'node:crypto';
import {
  CATEGORIES,
  GET_PRODUCT,
  INSERT_PRODUCT_LOGGED,
  LIST_PLAIN,
  LIST_PRICE_ABOVE,
  LIST_WITH_BRAND,
  TAGS,
  UPDATE_PRICE,
} from './bare-sql';
import { checkProductBody, HttpError, isId, now, pool, query, readBody, serveFloor, uuidv7, type FloorRequest, type Row } from './bare-http';

type Linked = Map<string, { ids: string[]; names: Record<string, unknown> }>;

/** The ids and names of a multiple link of the rows, by row id (one query). */
async function links(ids: string[], sql: (n: number) => string): Promise<Linked> {
  const byOwner: Linked = new Map(ids.map((id) => [id, { ids: [], names: {} }]));
  const [{ l }] = await query<{ l: string | null }>(pool, sql(ids.length), [...ids, false]);
  for (const [o, id, n] of (l ? JSON.parse(l) : []) as [string, string, unknown][]) {
    const e = byOwner.get(o);
    if (e) (e.ids.push(id), (e.names[id] = n));
  }
  return byOwner;
}

/** Adds `categoriesIds/Names` and `tagsIds/Names` (one query each) and orders keys as ours does. */
async function shape(rows: Row[]): Promise<Row[]> {
  if (rows.length === 0) return rows;
  const ids = rows.map((r) => r.id as string);
  const categories = await links(ids, CATEGORIES);
  const tags = await links(ids, TAGS);
  return rows.map((r) => {
    const c = categories.get(r.id as string)!;
    const t = tags.get(r.id as string)!;
    return {
      id: r.id, name: r.name, sku: r.sku, mpn: r.mpn, description: r.description, price: r.price, quantity: r.quantity,
      isActive: r.isActive, releaseDate: r.releaseDate, brandId: r.brandId, brandName: r.brandName,
      categoriesIds: c.ids, categoriesNames: c.names, statusId: r.statusId, statusName: r.statusName,
      tagsIds: t.ids, tagsNames: t.names, mainImageId: r.mainImageId, mainImageName: r.mainImageName, createdAt: r.createdAt, modifiedAt: r.modifiedAt,
      createdById: r.createdById, createdByName: r.createdByName, modifiedById: r.modifiedById, modifiedByName: r.modifiedByName,
    };
  });
}

/** The `deleted = false` bindings of the product select: five joined tables and the product. */
const NOT_DELETED = [false, false, false, false, false, false];

async function getProduct(id: string): Promise<Row | undefined> {
  if (!isId(id)) return undefined;
  return (await shape(await query<Row>(pool, GET_PRODUCT, [...NOT_DELETED, id])))[0];
}

async function listProducts(params: URLSearchParams): Promise<unknown> {
  const select = params.get('select');
  const maxSize = Number(params.get('maxSize') ?? 200);
  if (!Number.isInteger(maxSize) || maxSize < 0 || maxSize > 1000) throw new HttpError(400, 'CORE_INVALID_QUERY', 'bad maxSize');
  if (select === 'name,sku,price,brandName' && params.get('collectionOnly') === 'true') {
    const rows = await query<Row>(pool, LIST_WITH_BRAND, [false, false, maxSize, 0]);
    return { list: rows.map((r) => ({ id: r.id, name: r.name, sku: r.sku, price: r.price, brandId: r.brandId, brandName: r.brandName })) };
  }
  if (select === 'name,sku,price' && params.get('collectionOnly') === 'true') {
    const rows = await query<Row>(pool, LIST_PLAIN, [false, maxSize, 0]);
    return { list: rows.map((r) => ({ id: r.id, name: r.name, sku: r.sku, price: r.price })) };
  }
  if (select === 'name,sku,price,brandName,categoriesNames' && params.get('collectionOnly') === 'true') {
    const rows = await query<Row>(pool, LIST_WITH_BRAND, [false, false, maxSize, 0]);
    const categories = rows.length ? await links(rows.map((r) => r.id as string), CATEGORIES) : new Map();
    return {
      list: rows.map((r) => {
        const c = categories.get(r.id as string)!;
        return { id: r.id, name: r.name, sku: r.sku, price: r.price, brandId: r.brandId, brandName: r.brandName, categoriesIds: c.ids, categoriesNames: c.names };
      }),
    };
  }
  if (params.get('where[0][type]') === 'greaterThan' && params.get('where[0][attribute]') === 'price' && params.get('sortBy') === 'price') {
    const above = Number(params.get('where[0][value]'));
    if (!Number.isFinite(above)) throw new HttpError(400, 'CORE_INVALID_QUERY', 'bad value');
    if (maxSize === 0) throw new HttpError(400, 'CORE_INVALID_QUERY', 'The floor serves only the bench requests');
    const rows = await query<Row>(pool, LIST_PRICE_ABOVE, [false, above, maxSize]);
    return { total: rows.length ? rows[0].__total : 0, list: await shape(rows) };
  }
  throw new HttpError(400, 'CORE_INVALID_QUERY', 'The floor serves only the bench requests');
}

/** Checks the body the bench sends (types, required name, no unknown key), inserts with the product read back. */
async function createProduct(body: Row, userId: string): Promise<Row> {
  checkProductBody(body, ['name', 'sku', 'price', 'quantity', 'brandId']);
  if (body.brandId == null) throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'The floor creates products of a brand only');
  const id = uuidv7();
  const at = now();
  const values = [body.brandId ?? null, at, null, userId, id, true, at, null, userId, body.name, body.price ?? null, body.quantity ?? null, body.sku ?? null];
  const diff = Object.fromEntries(['name', 'sku', 'price', 'quantity', 'brandId'].filter((k) => body[k] != null).map((k) => [k, { was: null, became: body[k] }]));
  const change = ['Product', id, 'Create', JSON.stringify({ ...diff, isActive: { was: null, became: true } }), userId, null, randomUUID(), null, null, at];
  const rows = await query<Row>(pool, INSERT_PRODUCT_LOGGED, [...values, body.brandId ?? null, false, ...change, ...NOT_DELETED, id]).catch((error: { code?: string }) =>
    Promise.reject(error.code === '23505' ? new HttpError(409, 'CORE_UNIQUE_VIOLATION', 'duplicate') : error),
  );
  if (rows.length === 0) throw new HttpError(400, 'CORE_INVALID_LINK', `Brand '${String(body.brandId)}' not found`);
  return (await shape(rows))[0];
}

/**
 * Checks the body the bench sends (a price, nothing else) and updates the product when the price
 * changes: an update that changes nothing answers the record as it is, modifiedAt included.
 */
async function updateProduct(id: string, body: Row, userId: string): Promise<Row | undefined> {
  const [key, ...others] = Object.keys(body);
  if (key !== 'price' || others.length) throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'The floor updates the price only');
  if (typeof body.price !== 'number' || !Number.isFinite(body.price)) throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'price is invalid');
  if (!isId(id)) return undefined;
  const at = now();
  const bindings = [id, false, body.price, at, userId, null, false, body.price, 'Product', 'Update', userId, null, randomUUID(), at, ...NOT_DELETED, id];
  // No row: the product is missing, its price is the one sent, or another request wrote it meanwhile.
  const rows = await query<Row>(pool, UPDATE_PRICE, bindings);
  return rows.length ? (await shape(rows))[0] : getProduct(id);
}

async function route({ req, method, pathname, params, session }: FloorRequest): Promise<unknown> {
  const id = pathname.startsWith('/api/Product/') ? decodeURIComponent(pathname.slice('/api/Product/'.length)) : undefined;
  const found = (record: Row | undefined) => record ?? Promise.reject(new HttpError(404, 'CORE_NOT_FOUND', 'Product not found'));
  if (method === 'GET' && pathname === '/api/Product') return listProducts(params);
  if (method === 'GET' && id !== undefined) return found(await getProduct(id));
  if (method === 'POST' && pathname === '/api/Product') return createProduct(await readBody(req), session.userId);
  if (method === 'PATCH' && id !== undefined) return found(await updateProduct(id, await readBody(req), session.userId));
  throw new HttpError(404, 'CORE_ROUTE_NOT_FOUND', `No route ${method} ${pathname}`);
}

serveFloor(route);
