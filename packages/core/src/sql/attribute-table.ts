import type { AttributeType } from '../attributes/entities';
import type { FieldType } from '../declarations';
import type { EntityModel } from '../definition/normalize';
import type { Dialect } from './dialects/dialect';
import { indexName, type AuxiliaryTable } from './schema-sync';

/** The typed column each attribute type keeps its value in (so SQL filters and sorts compare typed values). */
export const VALUE_COLUMN: Readonly<Record<AttributeType, string>> = {
  varchar: 'value_text',
  text: 'value_text',
  enum: 'value_text',
  link: 'value_text',
  int: 'value_int',
  float: 'value_float',
  bool: 'value_bool',
  date: 'value_date',
  datetime: 'value_datetime',
  multiEnum: 'value_json',
  linkMultiple: 'value_json',
};

/** How the driver stores each attribute type (lists are JSON arrays). */
export const STORED_TYPE: Readonly<Record<AttributeType, FieldType>> = {
  varchar: 'text',
  text: 'text',
  enum: 'text',
  link: 'text',
  int: 'int',
  float: 'float',
  bool: 'bool',
  date: 'date',
  datetime: 'datetime',
  multiEnum: 'multiEnum',
  linkMultiple: 'multiEnum',
};

/** Every value column, once. */
export const VALUE_COLUMNS = [...new Set(Object.values(VALUE_COLUMN))];

/** The table holding the attribute values of one entity type (`product__attribute_value`). */
export function valueTableName(model: EntityModel): string {
  const name = `${model.table}__attribute_value`;
  return name.length <= 63 ? name : indexName('av', model.table, 'values');
}

/** The value table of an entity type with attributes, for schema sync. */
export function valueTable(model: EntityModel, dialect: Dialect): AuxiliaryTable {
  const name = valueTableName(model);
  const type = (t: FieldType) => dialect.columnType(t);
  return {
    name,
    columns: {
      id: 'varchar(64) not null',
      record_id: 'varchar(64) not null',
      attribute_id: 'varchar(64) not null',
      language: "varchar(16) not null default ''",
      value_text: type('text'),
      value_int: type('int'),
      value_float: type('float'),
      value_bool: type('bool'),
      value_date: type('date'),
      value_datetime: type('datetime'),
      value_json: type('multiEnum'),
      unit_id: 'varchar(64)',
    },
    primaryKey: ['id'],
    indexes: [
      { name: indexName('uq', name, 'record_attribute'), columns: ['record_id', 'attribute_id', 'language'], unique: true },
      { name: indexName('ix', name, 'attribute'), columns: ['attribute_id'] },
    ],
  };
}
