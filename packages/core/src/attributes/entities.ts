import { FIELD_TYPES, type FieldType } from '../declarations';
import { defineEntity } from '../definition/define-entity';
import { keepLink } from '../definition/fixed-link';

/** The value types an attribute may have: every field type but `jsonObject`. */
export type AttributeType = Exclude<FieldType, 'jsonObject'>;
export const ATTRIBUTE_TYPES: readonly AttributeType[] = FIELD_TYPES.filter((type): type is AttributeType => type !== 'jsonObject');

/**
 * An attribute: a virtual field of one entity type (`entityType`), valued per record. Its `code`
 * is the key of its virtual fields; generation B allows attributes without code (the id is the key).
 */
export const AttributeEntity = defineEntity({
  name: 'Attribute',
  fields: {
    code: { type: 'varchar', maxLength: 100, description: 'Key of the virtual fields: ^[a-z][a-zA-Z0-9_]*$, unique per entity type. Required through /api/.' },
    // Multilingual with a plugin that provides language variants (`nameDeDE`); without one a plain varchar.
    name: { type: 'varchar', isMultilang: true },
    entityType: { type: 'varchar', required: true, maxLength: 100, description: 'The entity type (with attributes) whose records carry it. Fixed once created.' },
    type: { type: 'enum', required: true, options: ATTRIBUTE_TYPES, description: 'Fixed once created.' },
    measure: { type: 'link', entity: 'Measure', description: 'int and float: the measure whose units the values carry. Fixed once created.' },
    isMultilang: { type: 'bool', default: false, description: 'varchar and text: one value per instance language.' },
    isRequired: { type: 'bool', default: false, description: 'A value, once the attribute is on a record, cannot be cleared.' },
    isReadOnly: { type: 'bool', default: false, description: 'Values cannot be changed through the API.' },
    isProtected: { type: 'bool', default: false, description: 'Once on a record, the attribute cannot be removed from it.' },
    options: { type: 'multiEnum', description: 'enum and multiEnum: the allowed values.' },
    linkEntity: { type: 'varchar', maxLength: 100, description: 'link and linkMultiple: the entity type linked to. Fixed once created.' },
    min: { type: 'float', description: 'int and float: the smallest value allowed.' },
    max: { type: 'float', description: 'int and float: the largest value allowed.' },
  },
  uniqueIndexes: { entity_code: ['entityType', 'code'] },
});

/** A measure (`weight`), whose units unit-bearing attributes use. */
export const MeasureEntity = defineEntity({
  name: 'Measure',
  fields: {
    name: { type: 'varchar' },
    code: { type: 'varchar', maxLength: 100, unique: true },
    units: {
      type: 'linkMultiple',
      entity: 'Unit',
      foreign: 'measure',
      readOnly: true,
      description: 'The units of the measure. Read-only: a unit is created in its measure (measureId) and stays there.',
    },
  },
});

/** A unit of a measure (`kg`, `g`); `factor` converts to the measure's base unit. */
export const UnitEntity = defineEntity({
  name: 'Unit',
  fields: {
    name: { type: 'varchar' },
    code: { type: 'varchar', maxLength: 100 },
    measure: { type: 'link', entity: 'Measure', required: true, description: 'The measure of the unit. Fixed once created.' },
    factor: { type: 'float', default: 1 },
    isDefault: { type: 'bool', default: false, description: 'The unit a value gets when it is written without one and has none yet (a value keeps its unit otherwise).' },
  },
  uniqueIndexes: { measure_code: ['measure', 'code'] },
  hooks: { beforeUpdate: keepLink('measure') },
});

export const ATTRIBUTE_ENTITIES = [AttributeEntity, MeasureEntity, UnitEntity];
