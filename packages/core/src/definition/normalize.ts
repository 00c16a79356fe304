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

/** A field's definition with its name and the entity it belongs to. */
interface OwnedField {
  owner: EntityDefinition;
  name: string;
  def: FieldDefinition;
}

/** A link field with the entity it points to. */
interface LinkEnds extends OwnedField {
  target: EntityDefinition;
}

/** Record key and column of a single-column field; a link holds the target's id. */
function keyAndColumn(name: string, def: FieldDefinition): { key: string; column: string } {
  return def.type === 'link' ? { key: `${name}Id`, column: `${snakeCase(name)}_id` } : { key: name, column: snakeCase(name) };
}

function systemFields(): FieldModel[] {
  const make = (name: string, def: FieldDefinition): FieldModel => ({
    name,
    type: def.type,
    def,
    ...keyAndColumn(name, def),
    system: true,
    ...(def.type === 'link' ? { target: 'User', linkKind: 'belongsTo' as const } : {}),
  });
  return [
    make('id', { type: 'varchar', maxLength: 64, readOnly: true }),
    make('createdAt', { type: 'datetime', readOnly: true }),
    make('modifiedAt', { type: 'datetime', readOnly: true }),
    make('createdBy', { type: 'link', entity: 'User', readOnly: true }),
    make('modifiedBy', { type: 'link', entity: 'User', readOnly: true }),
    // Delegated sessions: the admin who acted for createdBy / modifiedBy. Stored, never returned.
    make('createdByActor', { type: 'link', entity: 'User', readOnly: true, writeOnly: true }),
    make('modifiedByActor', { type: 'link', entity: 'User', readOnly: true, writeOnly: true }),
  ];
}

/** With `foreign`, both sides are named, in a fixed order: either side of the pair finds the same table. */
function joinTableName({ owner, name, def, target }: LinkEnds): string {
  const left = `${snakeCase(owner.name)}_${snakeCase(name)}`;
  const right = def.foreign ? `${snakeCase(target.name)}_${snakeCase(def.foreign)}` : snakeCase(target.name);
  return def.foreign && right < left ? `${right}__${left}` : `${left}__${right}`;
}

function joinTable(link: LinkEnds): JoinTable {
  const { owner, name, def, target } = link;
  const table = def.relationName ?? joinTableName(link);
  const self = owner.name === target.name;
  const ownColumn = self ? `${snakeCase(def.foreign ?? 'source')}_id` : `${snakeCase(owner.name)}_id`;
  const targetColumn = self ? `${snakeCase(name)}_id` : `${snakeCase(target.name)}_id`;
  return { table, ownColumn, targetColumn };
}

function fieldModel(field: OwnedField, all: Map<string, EntityDefinition>): FieldModel {
  const { name, def } = field;
  // A computed field has no column, and no client writes it.
  if (def.computed) return { name, type: def.type, def: { ...def, readOnly: true }, system: false, key: name };
  const base = { name, type: def.type, def, system: false };
  if (def.type === 'link') {
    return { ...base, ...keyAndColumn(name, def), target: def.entity, linkKind: 'belongsTo' };
  }
  if (def.type === 'linkMultiple') {
    const target = all.get(def.entity as string) as EntityDefinition;
    const back = def.foreign ? target.fields[def.foreign] : undefined;
    if (back?.type === 'link') {
      return { ...base, key: `${name}Ids`, target: target.name, linkKind: 'hasMany', foreignColumn: `${snakeCase(def.foreign as string)}_id` };
    }
    return { ...base, key: `${name}Ids`, target: target.name, linkKind: 'manyToMany', join: joinTable({ ...field, target }) };
  }
  return { ...base, ...keyAndColumn(name, def) };
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
    const own = Object.entries(def.fields).map(([name, f]) => fieldModel({ owner: def, name, def: f }, all));
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
