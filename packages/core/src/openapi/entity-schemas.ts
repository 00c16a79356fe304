import type { EntityModel, FieldModel, LinkField } from '../definition/model';
import { valueSchema } from '../definition/validate-record';
import { derivedOnCreate } from '../records/option-codes';
import type { MetaCategory } from '../present';

/**
 * Date-times go over the wire as UTC `YYYY-MM-DD HH:MM:SS`, which is not an RFC 3339 `date-time`
 * (no `T`, no offset), so a pattern describes them instead of `format`: a client that checks
 * formats would otherwise reject every record.
 */
export const DATETIME_READ = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$',
  description: 'UTC, YYYY-MM-DD HH:MM:SS',
} as const;

/** What writes accept: `YYYY-MM-DD HH:MM[:SS]` (UTC) or ISO 8601 with `T` and an offset. */
const DATETIME_WRITE = {
  pattern: '^\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?$',
  description: 'UTC YYYY-MM-DD HH:MM:SS, or ISO 8601 with an offset (stored as UTC)',
} as const;

/** JSON Schema (2020-12, as OpenAPI 3.1 uses it) of a value that may be null. */
function nullable(schema: Record<string, unknown>): Record<string, unknown> {
  const type = schema.type;
  if (Array.isArray(type)) return schema;
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  return schema;
}

/** A required field refuses null and the empty string (and, for lists, the empty list). */
function notEmpty(field: FieldModel, schema: Record<string, unknown>): Record<string, unknown> {
  const out = { ...schema };
  if (Array.isArray(out.type)) {
    const types = (out.type as string[]).filter((t) => t !== 'null');
    out.type = types.length === 1 ? types[0] : types;
  }
  if (Array.isArray(out.enum)) out.enum = (out.enum as unknown[]).filter((v) => v !== null);
  if (out.type === 'string' && field.type !== 'date' && field.type !== 'datetime') out.minLength = 1;
  if (out.type === 'array') out.minItems = 1;
  return out;
}

function describe(field: FieldModel, schema: Record<string, unknown>): Record<string, unknown> {
  const out = { ...schema };
  const text = field.def.description ?? field.def.label;
  if (text) out.description = text;
  if (field.def.readOnly) out.readOnly = true;
  if (field.def.writeOnly) out.writeOnly = true;
  if (field.def.default !== undefined) out.default = field.def.default;
  return out;
}

const SYSTEM_READ: Record<string, Record<string, unknown>> = {
  id: { type: 'string', readOnly: true },
  createdAt: { ...DATETIME_READ, readOnly: true },
  modifiedAt: { ...DATETIME_READ, readOnly: true },
  createdById: { type: ['string', 'null'], readOnly: true },
  modifiedById: { type: ['string', 'null'], readOnly: true },
};

/** The schema of a value as reads return it. */
function readValueSchema(field: FieldModel): Record<string, unknown> {
  if (field.type === 'linkMultiple') return { type: 'array', items: { type: 'string' } };
  if (field.type === 'datetime') return { ...DATETIME_READ, type: ['string', 'null'] };
  const schema = valueSchema(field);
  // Reads show what is stored, whatever limits a later definition puts on new writes.
  delete schema.maxLength;
  delete schema.pattern;
  return nullable(schema);
}

/**
 * Read schemas of core fields whose stored JSON is wider than their type says: a job's `result`
 * is an array for upserts and an object for mass updates.
 */
const READ_OVERRIDES: Record<string, Record<string, Record<string, unknown>>> = {
  Job: {
    result: {
      type: ['object', 'array', 'null'],
      items: { type: 'object', additionalProperties: true, description: 'An UpsertResult (upserts), or an item of a job type the host defined.' },
      readOnly: true,
      description:
        'Null until there is a result. upsertAsync: an array with one UpsertResult per item (saved at checkpoints while it runs, and kept when it fails). entityMassUpdate: a MassUpdateResult object.',
    },
  },
};

/** `_meta`, when categories exist: an object of the categories, each optional, and any others. */
function metaSchema(categories: ReadonlyMap<string, MetaCategory>): Record<string, unknown> {
  return {
    type: 'object',
    readOnly: true,
    description: 'Only with the header `With-Meta: true` (or `1`): named categories of facts about the record. Clients ignore categories they do not know.',
    properties: Object.fromEntries([...categories].map(([name, c]) => [name, c.schema ?? {}])),
    additionalProperties: true,
  };
}

/** What a read schema shows beyond the fields: `_meta` categories, and keys present hooks add. */
export interface ReadSchemaInput {
  meta?: ReadonlyMap<string, MetaCategory>;
  addedKeys?: (entity: string) => Record<string, Record<string, unknown>>;
}

/** The record as reads return it (with an optional `_meta` when `_meta` categories exist, and the keys present hooks add). */
export function readSchema(model: EntityModel, { meta = new Map(), addedKeys }: ReadSchemaInput = {}): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const f of model.fields) {
    if (f.def.writeOnly) continue;
    if (f.system) {
      properties[f.key] = SYSTEM_READ[f.key];
      if (f.type === 'link') properties[`${f.name}Name`] = { type: ['string', 'null'], readOnly: true };
      continue;
    }
    properties[f.key] = READ_OVERRIDES[model.name]?.[f.name] ?? describe(f, readValueSchema(f));
    if (f.type === 'link') properties[`${f.name}Name`] = { type: ['string', 'null'], readOnly: true };
    if (f.type === 'linkMultiple') {
      properties[`${f.name}Names`] = { type: 'object', additionalProperties: { type: ['string', 'null'] }, readOnly: true };
    }
  }
  for (const [key, schema] of Object.entries(addedKeys?.(model.name) ?? {})) properties[key] ??= { ...schema, readOnly: true };
  if (meta.size) properties._meta = metaSchema(meta);
  return {
    type: 'object',
    ...(model.def.description && { description: model.def.description }),
    properties,
    required: ['id'],
  };
}

/** The schema of a value as writes accept it. */
function writeValueSchema(field: FieldModel): Record<string, unknown> {
  const schema = valueSchema(field);
  if (field.type === 'datetime') {
    delete schema.format;
    Object.assign(schema, DATETIME_WRITE);
  }
  return field.def.required && field.type !== 'linkMultiple' ? notEmpty(field, schema) : schema;
}

/** Find-or-create: simple field values of the target; matched, or created when nothing matches. */
const LINK_OBJECT = {
  type: 'object',
  minProperties: 1,
  additionalProperties: { type: ['string', 'number', 'integer', 'boolean', 'null'] },
};

/** `brand: {…}` or `categories: [{…} | id, …]`, instead of `brandId` / `categoriesIds`. */
function linkObjectSchema(field: LinkField): Record<string, unknown> {
  const what = `the ${field.target} whose simple fields equal the given values, created when none does as \`POST /${field.target}\` with those values would create it (by that type's own rules: where a create needs more, such as a File's contents, a record is only found); several matches are 409`;
  if (field.type === 'link') {
    return { ...LINK_OBJECT, description: `Instead of ${field.key}: ${what}.` };
  }
  return {
    type: 'array',
    items: { anyOf: [LINK_OBJECT, { type: 'string' }] },
    description: `Instead of ${field.key}: ids, or objects naming ${what}.`,
  };
}

/**
 * The body of a create (required fields required) or an update (every field optional; a
 * required field cannot be cleared).
 */
export function writeSchema(model: EntityModel, mode: 'create' | 'update'): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  if (mode === 'create' && !model.def.serverIds) properties.id = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Optional; a UUIDv7 is made when absent.' };
  for (const f of model.fields) {
    if (f.system || f.def.readOnly) continue;
    properties[f.key] = describe(f, writeValueSchema(f));
    if (f.type === 'link' || f.type === 'linkMultiple') properties[f.name] = linkObjectSchema(f);
    if (mode === 'create' && derivedOnCreate(model, f)) properties[f.key] = { ...(properties[f.key] as object), description: 'Optional on create: derived from `name` when absent (lower case, other characters `_`, made unique in the list with `_2`, `_3`, …).' };
    else if (mode === 'create' && f.def.required && f.def.default === undefined && f.type === 'link') {
      // Either key gives the link: the id, or an object that finds (or creates) the record.
      const described = properties[f.key] as { description?: string };
      properties[f.key] = { ...described, description: [described.description, `Required on create, unless \`${f.name}\` names the record by an object instead.`].filter(Boolean).join(' ') };
    } else if (mode === 'create' && f.def.required && f.def.default === undefined && f.type !== 'linkMultiple') required.push(f.key);
  }
  // With `Flatten-Attributes: true` a body also carries attribute values (not described, as the spec says).
  const closed = model.def.hasAttributes
    ? { description: 'With the header `Flatten-Attributes: true`, also attribute values by attribute code, and `__attributes`.' }
    : { additionalProperties: false };
  return { type: 'object', properties, ...(required.length && { required }), ...closed };
}
