/** The floor's SQL, written out as a person would (and as knex prints it for our server; list.ts checks). */

const P = '"product"';
/** The columns of a Product (then `extra` columns) and the names of its single links, from `from` (the product table first). */
const selectProduct = (from: string, marks: (n: number) => string, extra = '') =>
  `select ${P}."id" as "id", ${P}."name" as "name", ${P}."sku" as "sku", ${P}."mpn" as "mpn", ` +
  `${P}."description" as "description", ${P}."price" as "price", ${P}."quantity" as "quantity", ` +
  `${P}."is_active" as "isActive", ${P}."release_date" as "releaseDate", ${P}."brand_id" as "brandId", ` +
  `coalesce(nullif("l_brand"."name", ''), nullif("l_brand"."code", ''), nullif("l_brand"."id", '')) as "brandName", ${P}."status_id" as "statusId", coalesce(nullif("l_status"."name", ''), nullif("l_status"."code", ''), nullif("l_status"."id", '')) as "statusName", ` +
  `${P}."main_image_id" as "mainImageId", coalesce(nullif("l_mainImage"."name", ''), nullif("l_mainImage"."id", '')) as "mainImageName", ` +
  `${P}."created_at" as "createdAt", ${P}."modified_at" as "modifiedAt", ${P}."created_by_id" as "createdById", ` +
  `coalesce(nullif("l_createdBy"."name", ''), nullif("l_createdBy"."user_name", ''), nullif("l_createdBy"."id", '')) as "createdByName", ${P}."modified_by_id" as "modifiedById", coalesce(nullif("l_modifiedBy"."name", ''), nullif("l_modifiedBy"."user_name", ''), nullif("l_modifiedBy"."id", '')) as "modifiedByName"${extra} ` +
  `from ${from} left join "brand" as "l_brand" on "l_brand"."id" = ${P}."brand_id" and "l_brand"."deleted" = ${marks(1)} ` +
  `left join "extensible_enum_option" as "l_status" on "l_status"."id" = ${P}."status_id" and "l_status"."deleted" = ${marks(2)} ` +
  `left join "file" as "l_mainImage" on "l_mainImage"."id" = ${P}."main_image_id" and "l_mainImage"."deleted" = ${marks(3)} ` +
  `left join "user" as "l_createdBy" on "l_createdBy"."id" = ${P}."created_by_id" and "l_createdBy"."deleted" = ${marks(4)} ` +
  `left join "user" as "l_modifiedBy" on "l_modifiedBy"."id" = ${P}."modified_by_id" and "l_modifiedBy"."deleted" = ${marks(5)} ` +
  `where ${P}."deleted" = ${marks(6)}`;
export const SELECT_PRODUCT = selectProduct(P, (n) => `$${n}`);
/** One product with its version (ours answers it as the ETag header, which the bench does not compare). */
export const GET_PRODUCT = `${selectProduct(P, (n) => `$${n}`, `, ${P}."record_version" as "__version"`)} and ${P}."id" = $7`;
/**
 * A page of products above a price, in price order, with the number of all of them: the ids are
 * picked, sorted and counted in a subquery before the names are joined (list.ts of core; the
 * select around the subquery writes "not deleted" as a literal).
 */
export const LIST_PRICE_ABOVE =
  selectProduct(
    `(select ${P}."id" as "__id", ${P}."price" as "__sort", count(*) over () as "__total" from ${P} where ${P}."deleted" = $1 and ${P}."price" > $2 ` +
      `order by ${P}."price" asc nulls first, ${P}."id" asc limit $3) as "__page" inner join ${P} on ${P}."id" = "__page"."__id"`,
    () => 'false',
  ).replace(/^select /, 'select "__page"."__total" as "__total", ') + ' order by "__page"."__sort" asc nulls first, "__page"."__id" asc';
export const LIST_WITH_BRAND =
  `select ${P}."id" as "id", ${P}."name" as "name", ${P}."sku" as "sku", ${P}."price" as "price", ` +
  `${P}."brand_id" as "brandId", coalesce(nullif("l_brand"."name", ''), nullif("l_brand"."code", ''), nullif("l_brand"."id", '')) as "brandName" from ${P} ` +
  `left join "brand" as "l_brand" on "l_brand"."id" = ${P}."brand_id" and "l_brand"."deleted" = $1 ` +
  `where ${P}."deleted" = $2 order by ${P}."id" asc limit $3 offset $4`;
export const LIST_PLAIN =
  `select ${P}."id" as "id", ${P}."name" as "name", ${P}."sku" as "sku", ${P}."price" as "price" from ${P} ` +
  `where ${P}."deleted" = $1 order by ${P}."id" asc limit $2 offset $3`;
const marks = (from: number, count: number) => Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');
/** The linked records of n owners, ordered by linked id, as one JSON text of [owner, id, name] arrays. */
const LINKED = (join: string, target: string, targetColumn: string) => (n: number) =>
  `select json_agg(json_build_array("j"."product_id", "t"."id", coalesce(nullif("t"."name", ''), nullif("t"."code", ''), nullif("t"."id", ''))) order by "t"."id")::text as "l" ` +
  `from "${join}" as "j" inner join "${target}" as "t" on "t"."id" = "j"."${targetColumn}" where "j"."product_id" in (${marks(1, n)}) and "t"."deleted" = $${n + 1}`;
export const CATEGORIES = LINKED('category_products__product_categories', 'category', 'category_id');
export const TAGS = LINKED('product_tags__extensible_enum_option', 'extensible_enum_option', 'extensible_enum_option_id');
/** One product with its version, from the row a write answers (`w`), its marks from `from` on. */
const WRITTEN_PRODUCT = (from: number) => `${selectProduct('"w" as "product"', (n) => `$${from + n - 1}`, `, ${P}."record_version" as "__version"`)} and ${P}."id" = $${from + 6}`;
const LOG_CHANGE = (from: number) =>
  'insert into "record_change" ("entity_type", "record_id", "action", "diff", "user_id", "actor_id", "request_id", "owner_id", "assignee_id", "created_at") ' +
  `select ${marks(from, 10)} from w`;
/**
 * A new product when its brand is live, its change, and the product read back from the row
 * inserted, in one statement, as ours sends a create of simple columns and single links on
 * PostgreSQL (no transaction; no row when the brand is not live; the brand held until the insert
 * commits, as a foreign key's check holds it, so that no permanent delete leaves a dangling link).
 */
export const INSERT_PRODUCT_LOGGED =
  'with w as (insert into "product" ("brand_id", "created_at", "created_by_actor_id", "created_by_id", "id", "is_active", "modified_at", ' +
  `"modified_by_actor_id", "modified_by_id", "name", "price", "quantity", "sku") select ${marks(1, 13)} ` +
  'where exists (select 1 from "brand" where "id" = $14 and "deleted" = $15 for key share) returning *), ' +
  `c as (${LOG_CHANGE(16)}) ${WRITTEN_PRODUCT(26)}`;
/**
 * The update as ours sends it when the database compares (a price, by a caller who edits every
 * product): the stored price and version read (`o`), the row written when the price differs and
 * the version is still the one read, its change with the diff the database makes of the two
 * rows, and the product read back from the row written, in one statement.
 */
export const UPDATE_PRICE =
  'with o as (select "id", "record_version", "price" from "product" where "id" = $1 and "deleted" = $2), ' +
  'w as (update "product" as t set "price" = $3, "modified_at" = $4, "modified_by_id" = $5, "modified_by_actor_id" = $6, "record_version" = t."record_version" + 1 ' +
  'from o where t."id" = o."id" and t."record_version" = o."record_version" and t."deleted" = $7 and (t."price" is distinct from $8) returning t.*, o."price" as "was:price"), ' +
  'c as (insert into "record_change" ("entity_type", "record_id", "action", "diff", "user_id", "actor_id", "request_id", "owner_id", "assignee_id", "created_at") ' +
  `select $9, w.id, $10, '{' || concat_ws(',', case when w."was:price" is distinct from w."price" then '"price":{"was":' || coalesce(to_json(w."was:price")::text, 'null') || ',"became":' || coalesce(to_json(w."price")::text, 'null') || '}' end) || '}', ` +
  `$11, $12, $13, w.created_by_id, null, $14 from w) ${WRITTEN_PRODUCT(15)}`;
export const TOKEN_BY_HASH =
  'select "id" as "id", "user_id" as "userId", "created_at" as "createdAt", "last_used_at" as "lastUsedAt", ' +
  '"expires_at" as "expiresAt", "idle_ms" as "idleMs", "actor_id" as "actorId" from "auth_token" where "token_hash" = $1 limit $2';
export const USER_ROLES =
  'select "r"."id" as "id" from "user_roles__role" as "j" inner join "role" as "r" on "r"."id" = "j"."role_id" ' +
  'where "j"."user_id" = $1 and "r"."deleted" = $2 order by "r"."id" asc';
export const USER_BY_ID =
  'select "id" as "id", "user_name" as "userName", "name" as "name", "is_admin" as "isAdmin", "is_active" as "isActive", ' +
  '"password" as "passwordHash" from "user" where "deleted" = $1 and "id" = $2 limit $3';
export const TOUCH_TOKEN = 'update "auth_token" set "last_used_at" = $1 where "id" = $2';
