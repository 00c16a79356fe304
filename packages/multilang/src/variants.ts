import { BootError, type EntityDefinition, type FieldDefinition, type Languages } from '@entity-records/core';

/** Field types that can be multilingual. */
export const MULTILANG_TYPES: readonly string[] = ['varchar', 'text'];

/** The definition options the plugin adds (declared to core, so definitions are checked at start-up). */
export const MULTILANG_ATTRIBUTES = {
  field: {
    multilangField: { type: 'string' },
    multilangLocale: { type: 'string' },
  },
};

/** Fields of entity types defined elsewhere (core's) made multilingual unless the host says otherwise. */
export const DEFAULT_FIELDS: Readonly<Record<string, readonly string[]>> = { ExtensibleEnumOption: ['name'] };

const fail = (entity: string, field: string, message: string): never => {
  throw new BootError('CORE_DEFINITION_INVALID', `entity '${entity}', field '${field}': ${message}`);
};

/**
 * The variant of a field in one language: the same type and limits, never required, unique or
 * defaulted (those rules belong to the main value), and marked with the field and language.
 */
function variantOf(name: string, field: FieldDefinition, code: string): FieldDefinition {
  const { required: _required, unique: _unique, default: _default, isMultilang: _multilang, label, description, ...rest } = field;
  return {
    ...rest,
    multilangField: name,
    multilangLocale: code,
    // A role that hides or locks the field hides or locks it in every language.
    rightsFrom: name,
    ...(label && { label: `${label} (${code})` }),
    description: `${description ?? label ?? name} in ${code}; when empty, reads in ${code} show the main value.`,
  };
}

/** One definition with the variants of its multilingual fields, each right after its field. */
function withVariants(def: EntityDefinition, languages: Languages, extra: readonly string[]): EntityDefinition {
  const fields: EntityDefinition['fields'] = {};
  let changed = false;
  for (const [name, field] of Object.entries(def.fields)) {
    if (field.multilangField !== undefined || field.multilangLocale !== undefined) {
      fail(def.name, name, 'multilangField and multilangLocale are set by @entity-records/multilang on the variants it adds');
    }
    if (!field.isMultilang && !extra.includes(name)) {
      fields[name] = field;
      continue;
    }
    if (!MULTILANG_TYPES.includes(field.type)) fail(def.name, name, `type ${field.type} cannot be multilingual (only ${MULTILANG_TYPES.join(' and ')})`);
    changed = true;
    fields[name] = { ...field, isMultilang: true };
    for (const code of languages.others) {
      const variant = languages.variant(name, code);
      if (variant in def.fields) fail(def.name, variant, `is the ${code} variant of the multilingual field '${name}'; remove it from the definition`);
      fields[variant] = variantOf(name, field, code);
    }
  }
  return changed ? { ...def, fields } : def;
}

/**
 * Adds a variant field (`nameDeDE`) per language other than the main one to every multilingual
 * field (`isMultilang: true`, or named in `extra` by entity type).
 */
export function addVariants(definitions: readonly EntityDefinition[], languages: Languages, extra: Readonly<Record<string, readonly string[]>>): EntityDefinition[] {
  for (const [entity, names] of Object.entries(extra)) {
    const def = definitions.find((d) => d.name === entity);
    if (!def) throw new BootError('CORE_CONFIG_INVALID', `@entity-records/multilang: option fields names unknown entity type '${entity}'`);
    for (const name of names) if (!def.fields[name]) fail(entity, name, 'is named in the option fields of @entity-records/multilang, but is no field');
  }
  return definitions.map((def) => withVariants(def, languages, extra[def.name] ?? []));
}
