import type { AttributeCondition } from '../attributes/record-attributes';
import type { EntityModel, FieldModel, SchemaModel } from '../definition/model';
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
}
