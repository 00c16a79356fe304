import type { EntityDefinition, FieldDefinition, FieldType } from '../declarations';
import { validateDefinitions, type DefinitionAttributes } from './validate-definition';

/** How a link field is stored. */
export type LinkKind = 'belongsTo' | 'hasMany' | 'manyToMany';

export interface JoinTable {
  table: string;
  /** Column holding this side's id. */
  ownColumn: string;
  /** Column holding the target's id. */
  targetColumn: string;
}

/** A field as the runtime sees it: names resolved, storage decided. */
export interface FieldModel {
  name: string;
  type: FieldType;
  def: FieldDefinition;
  /** Column of a stored single-column field (every type but linkMultiple). */
  column?: string;
  /** The key the value has in a record: `name`, `<name>Id` or `<name>Ids`. */
  key: string;
  /** True for id, createdAt, modifiedAt, createdBy, modifiedBy. */
  system: boolean;
  target?: string;
  linkKind?: LinkKind;
  join?: JoinTable;
  /** hasMany: the column on the target table that holds this record's id. */
  foreignColumn?: string;
}

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
  uniqueFields: FieldModel[];
  uniqueIndexes: UniqueIndexModel[];
}

export interface SchemaModel {
  entities: Map<string, EntityModel>;
  entity(name: string): EntityModel | undefined;
}

export const snakeCase = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();

function systemFields(): FieldModel[] {
  const make = (name: string, def: FieldDefinition, column: string, key = name): FieldModel => ({
    name,
    type: def.type,
    def,
    column,
    key,
    system: true,
    ...(def.type === 'link' ? { target: 'User', linkKind: 'belongsTo' as const } : {}),
  });
  return [
    make('id', { type: 'varchar', maxLength: 64, readOnly: true }, 'id'),
    make('createdAt', { type: 'datetime', readOnly: true }, 'created_at'),
    make('modifiedAt', { type: 'datetime', readOnly: true }, 'modified_at'),
    make('createdBy', { type: 'link', entity: 'User', readOnly: true }, 'created_by_id', 'createdById'),
    make('modifiedBy', { type: 'link', entity: 'User', readOnly: true }, 'modified_by_id', 'modifiedById'),
    // Delegated sessions: the admin who acted for createdBy / modifiedBy. Stored, never returned.
    make('createdByActor', { type: 'link', entity: 'User', readOnly: true, writeOnly: true }, 'created_by_actor_id', 'createdByActorId'),
    make('modifiedByActor', { type: 'link', entity: 'User', readOnly: true, writeOnly: true }, 'modified_by_actor_id', 'modifiedByActorId'),
  ];
}

function joinTableName(a: EntityDefinition, aField: string, b: EntityDefinition, bField?: string): string {
  const left = `${snakeCase(a.name)}_${snakeCase(aField)}`;
  const right = bField ? `${snakeCase(b.name)}_${snakeCase(bField)}` : snakeCase(b.name);
  return bField && right < left ? `${right}__${left}` : `${left}__${right}`;
}

function joinTable(owner: EntityDefinition, name: string, field: FieldDefinition, target: EntityDefinition): JoinTable {
  const table = field.relationName ?? joinTableName(owner, name, target, field.foreign);
  const self = owner.name === target.name;
  const ownColumn = self ? `${snakeCase(field.foreign ?? 'source')}_id` : `${snakeCase(owner.name)}_id`;
  const targetColumn = self ? `${snakeCase(name)}_id` : `${snakeCase(target.name)}_id`;
  return { table, ownColumn, targetColumn };
}

function fieldModel(owner: EntityDefinition, name: string, def: FieldDefinition, all: Map<string, EntityDefinition>): FieldModel {
  const base = { name, type: def.type, def, system: false };
  if (def.type === 'link') {
    return { ...base, key: `${name}Id`, column: `${snakeCase(name)}_id`, target: def.entity, linkKind: 'belongsTo' };
  }
  if (def.type === 'linkMultiple') {
    const target = all.get(def.entity as string) as EntityDefinition;
    const back = def.foreign ? target.fields[def.foreign] : undefined;
    if (back?.type === 'link') {
      return { ...base, key: `${name}Ids`, target: target.name, linkKind: 'hasMany', foreignColumn: `${snakeCase(def.foreign as string)}_id` };
    }
    return { ...base, key: `${name}Ids`, target: target.name, linkKind: 'manyToMany', join: joinTable(owner, name, def, target) };
  }
  return { ...base, key: name, column: snakeCase(name) };
}

/**
 * Validates the definitions together (with the options plugins declared) and resolves them into
 * the runtime model.
 */
export function normalizeDefinitions(definitions: readonly EntityDefinition[], options: { attributes?: DefinitionAttributes } = {}): SchemaModel {
  validateDefinitions(definitions, { attributes: options.attributes });
  const all = new Map(definitions.map((d) => [d.name, d]));
  const entities = new Map<string, EntityModel>();
  for (const def of definitions) {
    const [id, ...tail] = systemFields();
    const own = Object.entries(def.fields).map(([name, f]) => fieldModel(def, name, f, all));
    const fields = [id, ...own, ...tail];
    const field = new Map(fields.map((f) => [f.name, f]));
    const byKey = new Map(fields.map((f) => [f.key, f]));
    const uniqueIndexes = Object.entries(def.uniqueIndexes ?? {}).map(([indexName, names]) => ({
      name: indexName,
      fields: [...names],
      columns: names.map((n) => field.get(n)?.column as string),
    }));
    entities.set(def.name, {
      name: def.name,
      table: def.table ?? snakeCase(def.name),
      def,
      fields,
      field,
      byKey,
      uniqueFields: own.filter((f) => f.def.unique),
      uniqueIndexes,
    });
  }
  return { entities, entity: (name) => entities.get(name) };
}
