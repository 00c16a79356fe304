/**
 * The floor of the simple schema: bare `node:http` + `pg` (bare-http.ts: a pool of 10, the same
 * token rule as ours) answering the bench's requests with the same JSON as ours, through SQL
 * written from what each answer needs (simple-sql.ts), not copied from ours.
 */
import { checkProductBody, HttpError, isId, now, pool, query, readBody, serveFloor, uuidv7, type FloorRequest, type Row } from './bare-http';
import { CREATE_PRODUCT, CREATE_PRODUCT_LOGGED, GET_PRODUCT, INSERT_PRODUCTS, INSERT_PRODUCTS_LOGGED, LIST_PRICE_ABOVE_NAME_CONTAINS, LIST_PRODUCTS, UPDATE_PRICE, UPDATE_PRICE_LOGGED } from './simple-sql';

const FIELDS = ['name', 'sku', 'price', 'quantity', 'isActive', 'brandId', 'description'];
const notFound = () => new HttpError(404, 'CORE_NOT_FOUND', 'Product not found');
const onlyBench = () => new HttpError(400, 'CORE_INVALID_QUERY', 'The floor serves only the bench requests');
const escapeLike = (value: string) => value.replace(/[\\%_]/g, '\\$&');

async function getProduct(id: string): Promise<Row> {
  if (!isId(id)) throw notFound();
  const [record] = await query(pool, GET_PRODUCT, [id]);
  return record ?? Promise.reject(notFound());
}

/** The page size of a list: 0 to 200 (ours' limit for the bench's lists). */
function maxSize(params: URLSearchParams): number {
  const size = Number(params.get('maxSize') ?? 20);
  if (!Number.isInteger(size) || size < 1 || size > 200) throw onlyBench();
  return size;
}

/** `where[0]`: price greater than a number, `where[1]`: name contains a text; sorted by price, with the total. */
async function listFiltered(params: URLSearchParams): Promise<unknown> {
  const is = (key: string, value: string) => params.get(key) === value;
  const shape = is('where[0][type]', 'greaterThan') && is('where[0][attribute]', 'price') && is('where[1][type]', 'contains') && is('where[1][attribute]', 'name');
  if (!shape || params.has('where[2][type]') || !is('sortBy', 'price') || !is('asc', 'true') || params.has('offset') || params.has('select')) throw onlyBench();
  const above = Number(params.get('where[0][value]'));
  const text = params.get('where[1][value]') ?? '';
  if (!Number.isFinite(above)) throw new HttpError(400, 'CORE_INVALID_QUERY', 'bad value');
  const rows = await query(pool, LIST_PRICE_ABOVE_NAME_CONTAINS, [above, `%${escapeLike(text)}%`, maxSize(params)]);
  const total = rows.length ? rows[0].total : 0;
  return { total, list: rows.map(({ total: _total, ...record }) => record) };
}

async function listProducts(params: URLSearchParams): Promise<unknown> {
  if (params.has('where[0][type]')) return listFiltered(params);
  if (params.get('collectionOnly') !== 'true' || params.has('select') || params.has('sortBy') || params.has('offset')) throw onlyBench();
  return { list: await query(pool, LIST_PRODUCTS, [maxSize(params)]) };
}

/** A product's columns from a checked body, with the defaults of the definition. */
const values = (body: Row) => ({
  name: body.name,
  sku: body.sku ?? null,
  price: body.price ?? null,
  quantity: body.quantity ?? null,
  isActive: body.isActive ?? true,
  brandId: body.brandId ?? null,
  description: body.description ?? null,
});

const duplicate = (error: unknown) => ((error as { code?: string }).code === '23505' ? new HttpError(409, 'CORE_UNIQUE_VIOLATION', 'duplicate') : error);

async function createProduct(body: Row, userId: string, { logged }: { logged: boolean }): Promise<Row> {
  checkProductBody(body, FIELDS);
  const v = values(body);
  const bindings = [uuidv7(), v.name, v.sku, v.price, v.quantity, v.isActive, v.brandId, v.description, now(), userId];
  const [record] = await query(pool, logged ? CREATE_PRODUCT_LOGGED : CREATE_PRODUCT, bindings).catch((error: unknown) => Promise.reject(duplicate(error)));
  return record ?? Promise.reject(new HttpError(400, 'CORE_INVALID_LINK', `Brand '${String(body.brandId)}' not found`));
}

/** Sets the price (the one field the bench changes); an unchanged price answers the record as it is. */
async function updateProduct(id: string, body: Row, userId: string, { logged }: { logged: boolean }): Promise<Row> {
  const [key, ...others] = Object.keys(body);
  if (key !== 'price' || others.length) throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'The floor updates the price only');
  if (typeof body.price !== 'number' || !Number.isFinite(body.price)) throw new HttpError(400, 'CORE_VALIDATION_FAILED', 'price is invalid');
  if (!isId(id)) throw notFound();
  const [record] = await query(pool, logged ? UPDATE_PRICE_LOGGED : UPDATE_PRICE, [body.price, now(), userId, id]);
  return record ?? getProduct(id);
}

/**
 * New products in one insert, answered as ours answers an upsert of new records (the bench sends
 * no others); with `logged`, the same statement logs a change of each, as ours does.
 */
async function createProducts(items: Row[], userId: string, { logged }: { logged: boolean }): Promise<unknown[]> {
  const at = now();
  const rows = items.map((item) => {
    if (item.entity !== 'Product' || !item.payload || typeof item.payload !== 'object' || 'id' in item.payload) throw onlyBench();
    const payload = item.payload as Row;
    checkProductBody(payload, FIELDS);
    const v = values(payload);
    return { id: uuidv7(), name: v.name, sku: v.sku, price: v.price, quantity: v.quantity, is_active: v.isActive, brand_id: v.brandId, description: v.description };
  });
  const stored = await query<{ id: string }>(pool, logged ? INSERT_PRODUCTS_LOGGED : INSERT_PRODUCTS, [JSON.stringify(rows), at, userId]).catch((error: unknown) => Promise.reject(duplicate(error)));
  const ids = new Set(stored.map((r) => r.id));
  return rows.map((r) => {
    if (!ids.has(r.id)) return { status: 'Failed', stored: false, message: `Brand '${String(r.brand_id)}' not found` };
    const entity = { id: r.id, name: r.name, sku: r.sku, price: r.price, quantity: r.quantity, isActive: r.is_active, brandId: r.brand_id, description: r.description };
    return { status: 'Created', stored: true, entity: { ...entity, createdAt: at, modifiedAt: at, createdById: userId, modifiedById: userId } };
  });
}

async function route({ req, method, pathname, params, session }: FloorRequest): Promise<unknown> {
  // `?changes=logged`: the write also logs its change, as ours does (only the floor reads it).
  const logged = params.get('changes') === 'logged';
  const id = pathname.startsWith('/api/Product/') ? decodeURIComponent(pathname.slice('/api/Product/'.length)) : undefined;
  if (method === 'GET' && pathname === '/api/Product') return listProducts(params);
  if (method === 'GET' && id !== undefined) return getProduct(id);
  if (method === 'POST' && pathname === '/api/Product') return createProduct(await readBody(req), session.userId, { logged });
  if (method === 'PATCH' && id !== undefined) return updateProduct(id, await readBody(req), session.userId, { logged });
  if (method === 'POST' && pathname === '/api/upsert') return createProducts(await readBody<Row[]>(req, true), session.userId, { logged });
  throw new HttpError(404, 'CORE_ROUTE_NOT_FOUND', `No route ${method} ${pathname}`);
}

serveFloor(route);
