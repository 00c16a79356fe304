/**
 * The SQL of the simple floor (simple-floor.ts), written from what each answer needs, not copied
 * from ours: the fewest statements, each in the form the database runs cheapest (see the EXPLAIN
 * plans in bench/README.md, "simple").
 */

/** A user's name as ours shows it: its name, else its user name, else its id. */
const userName = (u: string) => `coalesce(nullif(${u}.name, ''), nullif(${u}.user_name, ''), ${u}.id)`;

/** The keys of a Product record, in our answer's order, from the product row `p` and the joins of NAMES. */
const RECORD =
  'p.id, p.name, p.sku, p.price, p.quantity, p.is_active as "isActive", p.brand_id as "brandId", b.name as "brandName", ' +
  'p.description, p.created_at as "createdAt", p.modified_at as "modifiedAt", ' +
  `p.created_by_id as "createdById", ${userName('cu')} as "createdByName", p.modified_by_id as "modifiedById", ${userName('mu')} as "modifiedByName"`;

/** The brand's and the users' names (a brand's name is required: never empty). */
const NAMES =
  'left join brand b on b.id = p.brand_id and not b.deleted ' +
  'left join "user" cu on cu.id = p.created_by_id and not cu.deleted ' +
  'left join "user" mu on mu.id = p.modified_by_id and not mu.deleted';

export const GET_PRODUCT = `select ${RECORD} from product p ${NAMES} where p.id = $1 and not p.deleted`;

/** The first products in id order: the primary key gives them in order, the joins cost only those rows. */
export const LIST_PRODUCTS = `select ${RECORD} from product p ${NAMES} where not p.deleted order by p.id limit $1`;

/**
 * Products above a price whose name contains a text ($2: a LIKE pattern), in price order, with
 * the number of all of them: one visit of the rows that match, which counts them (a window count
 * over two narrow columns) and keeps the first ones; the names are joined for those only. No
 * NULLS clause: the condition on the price leaves no NULL to place.
 */
export const LIST_PRICE_ABOVE_NAME_CONTAINS =
  `select ${RECORD}, page.total from (select id, price, count(*) over () as total from product ` +
  'where not deleted and price > $1 and lower(name) like lower($2) order by price, id limit $3) page ' +
  `join product p on p.id = page.id ${NAMES} order by page.price, page.id`;

/** A value as JSON text, `null` for NULL (cheaper for the database than `json_build_object`). */
const json = (value: string) => `coalesce(to_json(${value})::text, 'null')`;

/** `{"field": {"was": null, "became": value}}` of a new product `p`, made by the database. */
const CREATE_DIFF = `'${[
  ['name', 'name'],
  ['sku', 'sku'],
  ['price', 'price'],
  ['quantity', 'quantity'],
  ['isActive', 'is_active'],
  ['brandId', 'brand_id'],
  ['description', 'description'],
]
  .map(([key, column], i) => `${i ? '},' : '{'}"${key}":{"was":null,"became":' || ${json(`p.${column}`)} || '`)
  .join('')}}}'`;

/** Inserts a product when its brand (if any) is live, and answers it with the names, in one statement. */
export const CREATE_PRODUCT =
  'with p as (insert into product (id, name, sku, price, quantity, is_active, brand_id, description, created_at, modified_at, created_by_id, modified_by_id) ' +
  'select $1::text, $2::text, $3::text, $4::float8, $5::int, $6::bool, $7::text, $8::text, $9::timestamp, $9::timestamp, $10::text, $10::text ' +
  'where $7::text is null or exists (select 1 from brand where id = $7::text and not deleted) returning *) ' +
  `select ${RECORD} from p ${NAMES}`;

/**
 * CREATE_PRODUCT, and the `Create` change of the product in the same statement (the change log of
 * ours, CONTRACT §16, written as cheaply as we know: its diff made by the database from the row).
 */
export const CREATE_PRODUCT_LOGGED =
  'with p as (insert into product (id, name, sku, price, quantity, is_active, brand_id, description, created_at, modified_at, created_by_id, modified_by_id) ' +
  'select $1::text, $2::text, $3::text, $4::float8, $5::int, $6::bool, $7::text, $8::text, $9::timestamp, $9::timestamp, $10::text, $10::text ' +
  'where $7::text is null or exists (select 1 from brand where id = $7::text and not deleted) returning *), ' +
  "c as (insert into record_change (entity_type, record_id, action, diff, user_id, created_at) " +
  `select 'Product', p.id, 'Create', ${CREATE_DIFF}, $10::text, $9::text from p) ` +
  `select ${RECORD} from p ${NAMES}`;

/** Sets a product's price when it changes, and answers it with the names, in one statement (no row: missing or unchanged). */
export const UPDATE_PRICE =
  'with p as (update product set price = $1::float8, modified_at = $2, modified_by_id = $3, record_version = record_version + 1 ' +
  'where id = $4 and not deleted and price is distinct from $1::float8 returning *) ' +
  `select ${RECORD} from p ${NAMES}`;

/**
 * UPDATE_PRICE, and the `Update` change of the product in the same statement: the price it had
 * is read from the row as the statement found it (`o`), the one it has from the updated row.
 */
export const UPDATE_PRICE_LOGGED =
  'with o as (select id, price from product where id = $4 and not deleted), ' +
  'p as (update product set price = $1::float8, modified_at = $2, modified_by_id = $3, record_version = record_version + 1 ' +
  'from o where product.id = o.id and product.price is distinct from $1::float8 returning product.*, o.price as was), ' +
  "c as (insert into record_change (entity_type, record_id, action, diff, user_id, created_at) " +
  `select 'Product', p.id, 'Update', '{"price":{"was":' || ${json('p.was')} || ',"became":' || ${json('p.price')} || '}}', $3::text, $2::text from p) ` +
  `select ${RECORD} from p ${NAMES}`;

const INSERT_PRODUCT_ROWS =
  'insert into product (id, name, sku, price, quantity, is_active, brand_id, description, created_at, modified_at, created_by_id, modified_by_id) ' +
  'select v.id, v.name, v.sku, v.price, v.quantity, v.is_active, v.brand_id, v.description, $2::timestamp, $2::timestamp, $3::text, $3::text ' +
  'from json_to_recordset($1) as v (id text, name text, sku text, price float8, quantity int, is_active bool, brand_id text, description text) ' +
  'where v.brand_id is null or exists (select 1 from brand b where b.id = v.brand_id and not b.deleted)';

/** Inserts the rows of a JSON recordset ($1) whose brand (if any) is live; answers the ids stored. */
export const INSERT_PRODUCTS = `${INSERT_PRODUCT_ROWS} returning id`;


/**
 * INSERT_PRODUCTS, and a `Create` change of each product stored, in one statement: the change log
 * of ours (CONTRACT §16) written as cheaply as we know, the diffs made by the database from the
 * rows it inserted (the floor logs all seven fields; ours only those an item sets and the defaults).
 */
export const INSERT_PRODUCTS_LOGGED =
  `with p as (${INSERT_PRODUCT_ROWS} returning *), ` +
  'c as (insert into record_change (entity_type, record_id, action, diff, user_id, created_at) ' +
  `select 'Product', p.id, 'Create', ${CREATE_DIFF}, $3::text, $2::text from p) ` +
  'select id from p';
