import { FIELD_TYPES } from '../declarations';
import { isLinkField, type EntityModel, type FieldModel, type SchemaModel } from './model';

/** What each field type is, for clients that build forms from metadata. */
const FIELD_CATALOGUE: Record<string, { json: string; params: string[] }> = {
  varchar: { json: 'string', params: ['required', 'unique', 'default', 'maxLength', 'readOnly', 'searchable'] },
  text: { json: 'string', params: ['required', 'default', 'readOnly', 'searchable'] },
  int: { json: 'integer', params: ['required', 'unique', 'default', 'min', 'max', 'readOnly'] },
  float: { json: 'number', params: ['required', 'unique', 'default', 'min', 'max', 'readOnly'] },
  bool: { json: 'boolean', params: ['default', 'readOnly'] },
  date: { json: 'string (YYYY-MM-DD)', params: ['required', 'unique', 'default', 'readOnly'] },
  datetime: { json: 'string (YYYY-MM-DD HH:MM:SS, UTC)', params: ['required', 'unique', 'default', 'readOnly'] },
  enum: { json: 'string', params: ['required', 'unique', 'default', 'options', 'readOnly'] },
  multiEnum: { json: 'array of string', params: ['required', 'default', 'options', 'readOnly'] },
  jsonObject: { json: 'object', params: ['required', 'default', 'readOnly'] },
  link: { json: 'string id in <name>Id; name in <name>Name', params: ['required', 'entity', 'readOnly'] },
  linkMultiple: { json: 'array of ids in <name>Ids; names in <name>Names', params: ['entity', 'foreign', 'relationName', 'readOnly'] },
};

function entityDefs(model: EntityModel, show: (f: FieldModel) => boolean) {
  const fields: Record<string, Record<string, unknown>> = {};
  const links: Record<string, Record<string, unknown>> = {};
  for (const f of model.fields) {
    // A field no client reads or writes (the actor columns, a file's storage key) is internal.
    if (!show(f) || (f.def.writeOnly && (f.system || f.def.readOnly))) continue;
    const { label, description, ...def } = f.def;
    fields[f.name] = { ...def, ...(label && { label }), ...(description && { description }), ...(f.system && { system: true }) };
    if (isLinkField(f)) {
      links[f.name] = { type: f.linkKind, entity: f.target, ...(f.def.foreign && { foreign: f.def.foreign }), ...(f.linkKind === 'manyToMany' && { relationName: f.join.table }) };
    }
  }
  // An index naming a field the caller may not read would name that field.
  const shown = model.uniqueIndexes.filter((u) => u.fields.every((name) => Object.hasOwn(fields, name)));
  return { fields, links, uniqueIndexes: Object.fromEntries(shown.map((u) => [u.name, u.fields])) };
}

export interface MetadataOptions {
  languages?: readonly string[];
  thumbnailTypes?: Record<string, number>;
  /** Entity types to show; default all. */
  visible?: (entity: EntityModel) => boolean;
  /** Fields to show; default all. */
  visibleField?: (entity: EntityModel, field: FieldModel) => boolean;
}

/** The instance's metadata (CONTRACT.md §12). */
export function buildMetadata(schema: SchemaModel, options: MetadataOptions = {}) {
  const models = [...schema.entities.values()].filter((m) => options.visible?.(m) ?? true);
  return {
    entityDefs: Object.fromEntries(models.map((m) => [m.name, entityDefs(m, (f) => options.visibleField?.(m, f) ?? true)])),
    scopes: Object.fromEntries(models.map((m) => [m.name, { entity: true, hasAttributes: m.def.hasAttributes === true }])),
    fields: Object.fromEntries(FIELD_TYPES.map((t) => [t, FIELD_CATALOGUE[t]])),
    app: { languages: [...(options.languages ?? [])], thumbnailTypes: options.thumbnailTypes ?? {} },
  };
}
