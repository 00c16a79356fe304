import type { EntityDefinition, FieldDefinition, FieldType } from '../declarations';

/** The runtime model of definitions: names resolved, storage decided. Types only. */

/** How a link field is stored. */
export type LinkKind = 'belongsTo' | 'hasMany' | 'manyToMany';

export interface JoinTable {
  table: string;
  /** Column holding this side's id. */
  ownColumn: string;
  /** Column holding the target's id. */
  targetColumn: string;
}

/** A field type whose value is no link. */
export type ValueType = Exclude<FieldType, 'link' | 'linkMultiple'>;

interface FieldBase {
  name: string;
  def: FieldDefinition;
  /** The key the value has in a record: `name`, `<name>Id` or `<name>Ids`. */
  key: string;
  /** True for id, createdAt, modifiedAt, createdBy, modifiedBy (and the actors of delegated sessions). */
  system: boolean;
}

/** A value in a column of the record's row. */
export interface ColumnField extends FieldBase {
  type: ValueType;
  column: string;
}

/** A value a present hook sets in every answer: no column, never written. */
export interface ComputedField extends FieldBase {
  type: ValueType;
  column?: undefined;
}

/** A single link: the target's id in a column of the record's row (`<name>_id`). */
export interface SingleLinkField extends FieldBase {
  type: 'link';
  column: string;
  target: string;
  linkKind: 'belongsTo';
}

/** A multiple link whose target holds the record's id in a column of its own (the other side is a single link). */
export interface HasManyField extends FieldBase {
  type: 'linkMultiple';
  column?: undefined;
  target: string;
  linkKind: 'hasMany';
  /** The column on the target table that holds this record's id. */
  foreignColumn: string;
}

/** A multiple link stored as pairs in a join table. */
export interface ManyToManyField extends FieldBase {
  type: 'linkMultiple';
  column?: undefined;
  target: string;
  linkKind: 'manyToMany';
  join: JoinTable;
}

export type MultipleLinkField = HasManyField | ManyToManyField;
/** What link rules read of a link: a link field's, or a link attribute's seen as one. */
export type LinkEnd = Pick<SingleLinkField | MultipleLinkField, 'name' | 'key' | 'type' | 'target' | 'def'>;
export type LinkField = SingleLinkField | MultipleLinkField;
/** A field of an entity type: what its type is decides what else it has. */
export type FieldModel = ColumnField | ComputedField | LinkField;
/** A field with a column of its own in the record's row. */
export type StoredField = ColumnField | SingleLinkField;

export const isLinkField = (field: FieldModel): field is LinkField => field.type === 'link' || field.type === 'linkMultiple';
export const isStoredField = (field: FieldModel): field is StoredField => field.column !== undefined;

export interface UniqueIndexModel {
  name: string;
  fields: string[];
  columns: string[];
}

export interface EntityModel {
  name: string;
  table: string;
  def: EntityDefinition;
  /** Every field, system ones included, in output order. */
  fields: FieldModel[];
  field: Map<string, FieldModel>;
  /** Record key (`brandId`, `sku`, `createdAt`) → field. */
  byKey: Map<string, FieldModel>;
  /** Single-field unique keys, then unique indexes; both name partial unique indexes. */
  uniqueFields: StoredField[];
  uniqueIndexes: UniqueIndexModel[];
}

export interface SchemaModel {
  entities: Map<string, EntityModel>;
  entity(name: string): EntityModel | undefined;
}
