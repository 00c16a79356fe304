import type { RequestContext } from '../context';
import type { ApiRecord } from '../declarations';
import type { EntityModel, FieldModel } from '../definition/normalize';
import type { LinkEnd } from '../definition/model';
import type { QueryBuilder, SqlExpression, Transaction } from '../sql/database';
import type { PurgedValues } from '../sql/link-store';
import type { SqlContext } from '../sql/sql-context';
import type { AttributeDef } from './attribute-def';
import type { AppliedAttributes, AttributeWriteRules } from './apply-plan';

/** A where condition on an attribute, compiled against the value joined under `table`. */
export interface AttributeCondition {
  /** The attribute seen as a field of the joined value table (its typed value column). */
  field: FieldModel;
  /** The alias the value is joined under. */
  table: string;
  /** The operator to apply. */
  operator: string;
  /** The entity type a multiple-link attribute links to: its link operators count live records of it only. */
  linkTarget?: string;
}

/** What a list query needs to know about the attributes it names. */
export interface AttributeListQuery {
  /** Attributes whose values the page shows: every one the records have, or these. */
  shown: 'all' | readonly AttributeDef[] | undefined;
  /** Joins the values filters and sorting read (one left join per attribute, unique per record). */
  join(qb: QueryBuilder): void;
  /** Resolves `where[…][attribute]` of an `isAttribute` condition; undefined when unknown. */
  condition(name: unknown, operator: string): AttributeCondition | undefined;
  /** The expression to sort by when `sortBy` names a listed attribute. */
  sort?: SqlExpression;
}

/** The list parameters attributes read. */
export interface AttributeListParams {
  where?: readonly unknown[];
  sortBy?: string;
  attributes?: readonly string[];
  allAttributes?: boolean;
}

/** A link object given for a single-link attribute, where the body has it. */
export interface AttributeLinkObject {
  field: LinkEnd;
  object: Record<string, unknown>;
  path: readonly (string | number)[];
}

/** A body with its attribute keys taken out, and how to write them once the record is written. */
export interface PreparedAttributeWrite {
  body: Record<string, unknown>;
  /** The link objects of single-link attributes (generation A), each with its link and body key: checked before a mass update starts. */
  linkObjects?: readonly AttributeLinkObject[];
  /**
   * Writes the attribute values inside the record's transaction; true when something changed.
   * Absent when the body names no attribute (the write needs no attribute statement).
   */
  apply?(trx: Transaction, recordId: string, rules: AttributeWriteRules): Promise<AppliedAttributes>;
}

/**
 * The points where records meet their attributes. Repositories call each from one place:
 * list queries, the shaping of records about to be returned, and create and update bodies.
 */
export interface RecordAttributes {
  /** Resolves the attributes a list names (`where` with `isAttribute`, `attributes=`, `sortBy`); 400 for unknown ones. */
  listQuery(ctx: RequestContext, model: EntityModel, params: AttributeListParams): Promise<AttributeListQuery | undefined>;
  /** Adds attribute values to records about to be returned (flattened or nested, per the request). */
  present(ctx: RequestContext, { model, records }: { model: EntityModel; records: ApiRecord[] }, how: { mode: 'list' | 'single'; query?: AttributeListQuery }): Promise<void>;
  /** Takes the attribute keys (`Flatten-Attributes: true`) out of a create or update body. */
  prepareWrite(ctx: RequestContext, model: EntityModel, body: Record<string, unknown>): Promise<PreparedAttributeWrite | undefined>;
  /**
   * Before a permanent delete of `id`: the values of other records it changes (those of an
   * attribute, link values naming a record), which the delete locks, clears and logs with the
   * links it removes. 409 when an attribute, live or in the bin, carries its values in the
   * measure `id` (an attribute's measure is fixed once it exists).
   */
  purging(sql: SqlContext<Transaction>, model: EntityModel, id: string): Promise<PurgedValues | undefined>;
  /** A record removed for good takes its own values along. */
  onPermanentDelete(trx: Transaction, model: EntityModel, id: string): Promise<void>;
  /** A record just restored, inside the restore's transaction: an attribute may not clash with the live ones (400). */
  onRestore(trx: Transaction, model: EntityModel, id: string): Promise<void>;
}
