import type { AttributeCondition } from '../attributes/record-attributes';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/model';
import type { Knex } from 'knex';
import type { Dialect } from './dialects/dialect';

/** One condition of a list query, as the API receives it. */
export interface WhereItem {
  type: string;
  attribute?: string;
  value?: unknown;
  isAttribute?: boolean;
  timeZone?: string;
}

export interface WhereContext {
  schema: SchemaModel;
  dialect: Dialect;
  model: EntityModel;
  /** Called for every field a condition reads (permission checks); throws to refuse. */
  onField?: (field: FieldModel) => void;
  /**
   * Resolves the attribute of an `isAttribute` condition to its value column, joined under an
   * alias chosen by the server; undefined when the entity type has no such attribute.
   */
  attribute?: (name: unknown, operator: string) => AttributeCondition | undefined;
  /**
   * The link operators of the `where` test their subqueries as filters (a hashed subplan each)
   * instead of letting the planner join them (see `applyWhere`).
   */
  linksAsFilters?: boolean;
}

/** One condition being applied: the query it narrows, the field it reads, the item as received. */
export interface Condition {
  qb: Knex.QueryBuilder;
  field: FieldModel;
  item: WhereItem;
  ctx: WhereContext;
}

/** How an operator narrows a query. */
export type Apply = (condition: Condition) => void;

/** The column of a field, qualified by the table of the condition's entity (knex form, and quoted SQL). */
export const col = (ctx: WhereContext, field: FieldModel): string => `${ctx.model.table}.${field.column}`;
export const rawCol = (ctx: WhereContext, field: FieldModel): string => `"${ctx.model.table}"."${field.column}"`;
