import type { EntityDefinition, FieldDefinition } from '../declarations';
import { isStoredField, type EntityModel, type FieldModel, type JoinTable, type SchemaModel, type StoredField, type ValueType } from './model';
import { snakeCase } from './names';
import { validateDefinitions, type DefinitionAttributes } from './validate-definition';

export type * from './model';
export { isLinkField, isStoredField } from './model';
export { snakeCase } from './names';

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

/** A field stored in one column: a single link holds the target's id in `<name>_id`. */
function columnField({ name, def, system }: { name: string; def: FieldDefinition; system: boolean }): FieldModel {
  if (def.type === 'link') return { name, type: 'link', def, system, key: `${name}Id`, column: `${snakeCase(name)}_id`, target: def.entity as string, linkKind: 'belongsTo' };
  return { name, type: def.type as ValueType, def, system, key: name, column: snakeCase(name) };
}

function systemFields(): FieldModel[] {
  const make = (name: string, def: FieldDefinition): FieldModel => columnField({ name, def, system: true });
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
  // A computed field has no column, and no client writes it (definitions refuse computed links).
  if (def.computed) return { name, type: def.type as ValueType, def: { ...def, readOnly: true }, system: false, key: name };
  if (def.type !== 'linkMultiple') return columnField({ name, def, system: false });
  const base = { name, type: 'linkMultiple' as const, def, system: false, key: `${name}Ids` };
  const target = all.get(def.entity as string) as EntityDefinition;
  const back = def.foreign ? target.fields[def.foreign] : undefined;
  if (back?.type === 'link') return { ...base, target: target.name, linkKind: 'hasMany', foreignColumn: `${snakeCase(def.foreign as string)}_id` };
  return { ...base, target: target.name, linkKind: 'manyToMany', join: joinTable({ ...field, target }) };
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
      uniqueFields: own.filter((f): f is StoredField => f.def.unique === true && isStoredField(f)),
      uniqueIndexes,
    });
  }
  return { entities, entity: (name) => entities.get(name) };
}
